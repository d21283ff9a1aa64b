/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "shared/tickmath.h"
#include "testpage.h"

/* Every field tp_fill() derives from the step, with the hash salt that
 * makes its value differ from every other field's. jiffies_64 and
 * kernel_mono_ns are set apart (they carry the step itself). */
#define HASHED_FIELDS(X)                                                       \
	X(vclock_mode, 1) X(vclock_clockid, 2) X(cycle_last, 3) X(mask, 4)     \
	X(max_cycles, 5) X(mult, 6) X(shift, 7) X(mono_sec, 8)                 \
	X(mono_snsec, 9) X(real_sec, 10) X(real_snsec, 11) X(raw_sec, 12)      \
	X(raw_snsec, 13) X(raw_mult, 14) X(xtime_nsec, 15) X(xtime_sec, 16)    \
	X(coarse_mono_sec, 17) X(coarse_mono_nsec, 18) X(offset_ns, 19)        \
	X(freq_ppb, 20) X(error_bound_ns, 21) X(rms_offset_ns, 22)             \
	X(skew_ppb, 23) X(ref_mono_ns, 24) X(disc_state, 25)  \
	X(leap, 26) X(tai_offset, 27)

/* A 64-bit mixing function (multiply-xorshift): neighbouring steps give
 * unrelated values, so no torn mix of two steps looks like a third. */
static uint64_t mix(uint64_t n, uint64_t salt)
{
	uint64_t z = (n + 1) * UINT64_C(0x9e3779b97f4a7c15) + salt * UINT64_C(0xd1b54a32d192ed03);

	z = (z ^ (z >> 31)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 29)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 32);
}

void tp_fill(struct clockd_page_data *d, uint64_t n)
{
	memset(d, 0, sizeof(*d));
#define X(f, salt) d->f = (__typeof__(d->f))mix(n, salt);
	HASHED_FIELDS(X)
#undef X
	d->jiffies_64 = TP_J0 + n;
	d->kernel_mono_ns = n;
}

const char *tp_diff(const struct clockd_page_data *a, const struct clockd_page_data *b)
{
#define X(f, salt) if (a->f != b->f) return #f;
	HASHED_FIELDS(X)
	X(jiffies_64, 0) X(kernel_mono_ns, 0)
#undef X
	return NULL;
}

/* The test clock's REALTIME: the raw counter moved to 2023-11. */
#define TP_REAL_OFFSET_SEC INT64_C(1700000000)
#define TP_SHIFT 8u

void tp_fill_clock(struct clockd_page_data *d)
{
	uint64_t raw = (uint64_t)kclock_ns(CLOCK_MONOTONIC_RAW);
	uint64_t tick = raw / (NSEC_PER_SEC / TP_HZ);
	uint64_t coarse = tick * (NSEC_PER_SEC / TP_HZ);

	memset(d, 0, sizeof(*d));
	d->vclock_mode = CLOCKD_VCLOCK_POSIX;
	d->vclock_clockid = CLOCK_MONOTONIC_RAW;
	/* The counter is in ns: mult/shift is exactly 1, kept shifted as
	 * the daemon's real clocks are. */
	d->cycle_last = raw;
	d->mask = UINT64_MAX;
	d->max_cycles = TP_STALE_NS;
	d->mult = 1u << TP_SHIFT;
	d->raw_mult = 1u << TP_SHIFT;
	d->shift = TP_SHIFT;
	d->raw_sec = (int64_t)(raw / NSEC_PER_SEC);
	d->raw_snsec = (raw % NSEC_PER_SEC) << TP_SHIFT;
	d->mono_sec = d->raw_sec + TP_MONO_OFFSET_SEC;
	d->mono_snsec = d->raw_snsec;
	d->real_sec = d->raw_sec + TP_REAL_OFFSET_SEC;
	d->real_snsec = d->raw_snsec;
	d->coarse_mono_sec = (int64_t)(coarse / NSEC_PER_SEC) + TP_MONO_OFFSET_SEC;
	d->coarse_mono_nsec = (uint32_t)(coarse % NSEC_PER_SEC);
	d->xtime_sec = d->coarse_mono_sec - TP_MONO_OFFSET_SEC + TP_REAL_OFFSET_SEC;
	d->xtime_nsec = d->coarse_mono_nsec;
	d->jiffies_64 = TP_J0 + tick;
	/* Freshness is judged against the kernel's CLOCK_MONOTONIC. */
	d->kernel_mono_ns = (uint64_t)kclock_ns(CLOCK_MONOTONIC);
}

static void fill_header(struct clockd_page *pg)
{
	pg->hz = TP_HZ;
	pg->generation = 1;
	pg->tick_ns = tick_period_ns_ceil(TP_HZ);
	pg->stale_ns = TP_STALE_NS;
	pg->start_mono_ns = kclock_ns(CLOCK_MONOTONIC);
	pg->jiffies_base = TP_J0;
	pg->jiffies_epoch_ns = pg->start_mono_ns;
	pg->initial_jiffies = TP_J0;
	snprintf(pg->source, sizeof(pg->source), "test");
	snprintf(pg->tick, sizeof(pg->tick), "test");
	pg->pid = (uint32_t)getpid();
}

int tp_create(struct test_page *tp)
{
	const char *tmp = getenv("TMPDIR");

	memset(tp, 0, sizeof(*tp));
	tp->pf.fd = -1;
	snprintf(tp->dir, sizeof(tp->dir), "%s/clockd-page-test.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(tp->dir)) {
		fprintf(stderr, "mkdtemp %s: %s\n", tp->dir, strerror(errno));
		return -1;
	}
	snprintf(tp->path, sizeof(tp->path), "%s/page", tp->dir);
	if (pagefile_open(&tp->pf, tp->path) < 0)
		goto err_rmdir;
	fill_header(tp->pf.pg);
	return 0;

err_rmdir:
	rmdir(tp->dir);
	return -1;
}

void tp_destroy(struct test_page *tp)
{
	pagefile_close(&tp->pf);
	unlink(tp->path);
	rmdir(tp->dir);
}

