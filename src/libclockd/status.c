/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* clockd_status(): a snapshot of the page for tools and monitoring. */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "libclockd/internal.h"
#include "shared/latch.h"
#include "shared/tickmath.h"

static void copy_name(char *dst, const char *src, size_t n)
{
	size_t i;

	for (i = 0; i + 1 < n && src[i]; i++)
		dst[i] = src[i];
	dst[i] = '\0';
}

/* Differences and sums of page values in modular arithmetic: a corrupt
 * page gives nonsense figures, never undefined behaviour (signed overflow;
 * found by tests/fuzz/page-fuzz.c). */
static int64_t wrap_sub(int64_t a, int64_t b)
{
	return (int64_t)((uint64_t)a - (uint64_t)b);
}

static int64_t wrap_ns(int64_t sec, int64_t nsec)
{
	return (int64_t)((uint64_t)sec * NSEC_PER_SEC + (uint64_t)nsec);
}

_Static_assert(sizeof(struct clockd_status) >= CLOCKD_STATUS_SIZE_V1, "status struct only grows");

static void status_fill(struct clockd_status *st);

CLOCKD_EXPORT int clockd_status(struct clockd_status *out, size_t size)
{
	struct clockd_status st;

	if (!out) {
		errno = EFAULT;
		return -1;
	}
	if (size < CLOCKD_STATUS_SIZE_V1) {
		errno = EINVAL;
		return -1;
	}
	status_fill(&st);
	memcpy(out, &st, size < sizeof(st) ? size : sizeof(st));
	return 0;
}

static void status_fill(struct clockd_status *st)
{
	const struct clockd_page *pg;
	struct clockd_page_data d;
	struct timespec ts;
	int64_t kmono;
	int err = 0;

	memset(st, 0, sizeof(*st));
	copy_name(st->page_path, lib_page_path(), sizeof(st->page_path));
	pg = lib_page(&err);
	if (!pg) {
		st->state = CLOCKD_STATE_ABSENT;
		st->errno_hint = err;
		return;
	}
	latch_snapshot(pg, &d);
	/* The page's kernel_mono_ns is the initial namespace's. */
	kmono = lib_host_kmono();
	st->hz = LOAD_RELAXED(&pg->hz);
	st->flags = LOAD_RELAXED(&pg->flags);
	st->generation = LOAD_RELAXED(&pg->generation);
	st->pid = LOAD_RELAXED(&pg->pid);
	st->vclock_mode = d.vclock_mode;
	st->jiffies_64 = d.jiffies_64;
	st->xtime_sec = d.xtime_sec;
	st->xtime_nsec = d.xtime_nsec;
	st->age_ns = wrap_sub(kmono, (int64_t)d.kernel_mono_ns);
	st->stale_ns = LOAD_RELAXED(&pg->stale_ns);
	st->extrapolate_ns = LOAD_RELAXED(&pg->extrapolate_ns);
	if (!st->extrapolate_ns) /* a daemon older than 0.4 */
		st->extrapolate_ns = st->stale_ns;
	st->initial_jiffies = LOAD_RELAXED(&pg->initial_jiffies);
	st->freq_ppb = d.freq_ppb;
	st->offset_ns = d.offset_ns;
	st->leap = d.leap;
	st->tai_offset = d.tai_offset;
	copy_name(st->source, pg->source, sizeof(st->source));
	copy_name(st->tick, pg->tick, sizeof(st->tick));
	if (!lib_writer_alive(pg)) {
		lib_page_gone();
		st->state = CLOCKD_STATE_GONE;
		st->errno_hint = ESTALE;
	} else if (LOAD_RELAXED(&pg->alarm) || st->age_ns > (int64_t)st->stale_ns) {
		/* Silent, but the fine reads extrapolate (and the coarse
		 * ones return the last tick) up to extrapolate_ns. */
		st->state = CLOCKD_STATE_STALE;
		if (LOAD_RELAXED(&pg->alarm) || st->age_ns > (int64_t)st->extrapolate_ns)
			st->errno_hint = ESTALE;
	} else {
		st->state = CLOCKD_STATE_LIVE;
	}
	if (st->state == CLOCKD_STATE_LIVE && clockd_clock_gettime(CLOCKD_MONOTONIC, &ts) == 0)
		st->mono_ns = wrap_ns(ts.tv_sec, ts.tv_nsec);
	else
		st->mono_ns = (int64_t)((uint64_t)wrap_ns(d.coarse_mono_sec, d.coarse_mono_nsec) +
					(uint64_t)lib_timens_mono_ns());
	/* start_mono_ns is the daemon's, in the initial namespace. */
	st->uptime_ns = wrap_sub(wrap_sub(st->mono_ns, lib_timens_mono_ns()), LOAD_RELAXED(&pg->start_mono_ns));
}

#define DEVICES_TRIES 1000

_Static_assert(sizeof(struct clockd_device) == sizeof(struct clockd_page_device) - 16,
	       "clockd_device is the page's entry without its reserved tail");

_Static_assert(sizeof(struct clockd_device) >= CLOCKD_DEVICE_SIZE_V1, "device struct only grows");

/* Copy the page's device table into @tab: the count, or -1 with errno. */
static int devices_read(struct clockd_page_device tab[CLOCKD_PAGE_MAX_DEVICES])
{
	const struct clockd_page *pg;
	uint32_t s, n = 0;
	int err = 0, i;

	pg = lib_page(&err);
	if (!pg) {
		errno = err;
		return -1;
	}
	/* A plain sequence count: the table changes rarely, and a reader
	 * can wait out a write (or give up on a writer killed in one). */
	for (i = 0; i < DEVICES_TRIES; i++) {
		s = seqcount_read_begin(&pg->dev_seq);
		n = LOAD_RELAXED(&pg->ndevices);
		if (n > CLOCKD_PAGE_MAX_DEVICES)
			n = CLOCKD_PAGE_MAX_DEVICES;
		latch_load_words(tab, pg->devices, n * sizeof(tab[0]) / 8);
		if (!seqcount_read_retry(&pg->dev_seq, s))
			break;
	}
	if (i == DEVICES_TRIES) {
		errno = EAGAIN;
		return -1;
	}
	return (int)n;
}

static void device_fill(struct clockd_device *d, const struct clockd_page_device *e)
{
	memset(d, 0, sizeof(*d));
	copy_name(d->name, e->name, sizeof(d->name));
	copy_name(d->device, e->device, sizeof(d->device));
	d->role = e->role;
	d->state = e->state;
	d->fault = e->fault;
	/* The daemon's kernel CLOCK_MONOTONIC, as the caller's reads it. */
	d->since_ns = (int64_t)((uint64_t)e->since_ns + (uint64_t)lib_timens_mono_ns());
	d->faults = e->faults;
	d->spurious = e->spurious;
	d->missed = e->missed;
}

/* Entries of @size bytes each: the caller's struct clockd_device, of this
 * version (sizeof), an older smaller one (at least the first version), or
 * a newer larger one whose fields this library does not know (zeroed). */
CLOCKD_EXPORT int clockd_devices2(struct clockd_device *out, size_t size, int max)
{
	struct clockd_page_device tab[CLOCKD_PAGE_MAX_DEVICES];
	struct clockd_device d;
	int n;

	if (!out && max > 0) {
		errno = EFAULT;
		return -1;
	}
	if (size < CLOCKD_DEVICE_SIZE_V1 || max < 0) {
		errno = EINVAL;
		return -1;
	}
	n = devices_read(tab);
	if (n < 0)
		return -1;
	for (int i = 0; i < n && i < max; i++) {
		char *slot = (char *)out + (size_t)i * size;

		device_fill(&d, &tab[i]);
		if (size > sizeof(d)) {
			memset(slot + sizeof(d), 0, size - sizeof(d));
			memcpy(slot, &d, sizeof(d));
		} else {
			memcpy(slot, &d, size);
		}
	}
	return n;
}

/* The first version (0.2): entries of the struct as it was then; a
 * negative @max is 0, as it always was. */
CLOCKD_EXPORT int clockd_devices(struct clockd_device *out, int max)
{
	return clockd_devices2(out, CLOCKD_DEVICE_SIZE_V1, max < 0 ? 0 : max);
}

#define TRACKING_SIZE_V1 (offsetof(struct clockd_tracking, since_event_ns) + sizeof(int64_t))

CLOCKD_EXPORT int clockd_tracking(struct clockd_tracking *out, size_t size)
{
	struct clockd_device dev[CLOCKD_PAGE_MAX_DEVICES];
	struct clockd_tracking t;
	const struct clockd_page *pg;
	struct clockd_page_data d;
	int err = 0, n;

	if (!out) {
		errno = EFAULT;
		return -1;
	}
	if (size < TRACKING_SIZE_V1) {
		errno = EINVAL;
		return -1;
	}
	pg = lib_page(&err);
	if (!pg) {
		errno = err;
		return -1;
	}
	n = clockd_devices2(dev, sizeof(dev[0]), CLOCKD_PAGE_MAX_DEVICES);
	if (n < 0)
		return -1;
	latch_snapshot(pg, &d);
	memset(&t, 0, sizeof(t));
	t.state = d.disc_state;
	t.synced = (LOAD_RELAXED(&pg->flags) & CLOCKD_PAGE_SYNCED) != 0;
	for (int i = 0; i < n && i < CLOCKD_PAGE_MAX_DEVICES; i++) {
		if (dev[i].role == CLOCKD_DEV_REFERENCE) {
			copy_name(t.reference, dev[i].name, sizeof(t.reference));
			copy_name(t.device, dev[i].device, sizeof(t.device));
		}
	}
	t.offset_ns = d.offset_ns;
	t.rms_offset_ns = d.rms_offset_ns;
	t.freq_ppb = d.freq_ppb;
	t.skew_ppb = d.skew_ppb;
	t.error_bound_ns = d.error_bound_ns;
	t.since_event_ns = d.ref_mono_ns ? wrap_sub(lib_host_kmono(), d.ref_mono_ns) : -1;
	memcpy(out, &t, size < sizeof(t) ? size : sizeof(t));
	return 0;
}
