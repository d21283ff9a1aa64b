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
	kmono = kclock_ns(CLOCK_MONOTONIC);
	st->hz = LOAD_RELAXED(&pg->hz);
	st->flags = LOAD_RELAXED(&pg->flags);
	st->generation = LOAD_RELAXED(&pg->generation);
	st->pid = LOAD_RELAXED(&pg->pid);
	st->vclock_mode = d.vclock_mode;
	st->jiffies_64 = d.jiffies_64;
	st->xtime_sec = d.xtime_sec;
	st->xtime_nsec = d.xtime_nsec;
	st->age_ns = kmono - (int64_t)d.kernel_mono_ns;
	st->stale_ns = LOAD_RELAXED(&pg->stale_ns);
	st->initial_jiffies = LOAD_RELAXED(&pg->initial_jiffies);
	st->freq_ppb = d.freq_ppb;
	st->offset_ns = d.offset_ns;
	copy_name(st->source, pg->source, sizeof(st->source));
	copy_name(st->tick, pg->tick, sizeof(st->tick));
	if (!lib_writer_alive(pg)) {
		lib_page_gone();
		st->state = CLOCKD_STATE_GONE;
		st->errno_hint = ESTALE;
	} else if (LOAD_RELAXED(&pg->alarm) || st->age_ns > (int64_t)st->stale_ns) {
		st->state = CLOCKD_STATE_STALE;
		st->errno_hint = ESTALE;
	} else {
		st->state = CLOCKD_STATE_LIVE;
	}
	if (st->state == CLOCKD_STATE_LIVE && clockd_clock_gettime(CLOCKD_MONOTONIC, &ts) == 0)
		st->mono_ns = ts_to_ns(&ts);
	else
		st->mono_ns = d.coarse_mono_sec * (int64_t)NSEC_PER_SEC + d.coarse_mono_nsec;
	st->uptime_ns = st->mono_ns - LOAD_RELAXED(&pg->start_mono_ns);
}
