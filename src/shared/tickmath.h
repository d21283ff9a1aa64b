/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Exact tick and counter arithmetic, shared by the daemon and the tests.
 * tickmath.c uses 128-bit integers and is built for the daemon only; what
 * libclockd uses from here is inline and portable to 32-bit targets.
 *
 * Tick k of an epoch falls at epoch + floor(k * 1e9 / hz) ns. Computing each
 * tick's time from k (not by adding a rounded period) keeps a rate such as
 * HZ=1024 (976562.5 ns) free of accumulated drift for any number of ticks.
 */
#ifndef CLOCKD_SHARED_TICKMATH_H
#define CLOCKD_SHARED_TICKMATH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#define NSEC_PER_SEC 1000000000ull
#define CLOCKD_HZ_MIN 1u
#define CLOCKD_HZ_MAX 100000u

/* ns from the epoch to tick @k at @hz (1..CLOCKD_HZ_MAX): floor(k*1e9/hz). */
uint64_t tick_offset_ns(uint64_t k, uint32_t hz);
/* The index of the last tick at or before @d ns after the epoch: the
 * largest k with tick_offset_ns(k, hz) <= d. */
uint64_t tick_index(uint64_t d, uint32_t hz);
/* The tick period rounded up, in ns (clock_getres of the coarse clocks). */
uint32_t tick_period_ns_ceil(uint32_t hz);
/* INITIAL_JIFFIES for a 32-bit view that wraps @wrap_s seconds after
 * start: (uint32)(-wrap_s * hz). */
uint64_t initial_jiffies_for(uint32_t hz, uint64_t wrap_s);

/*
 * Pick mult and shift so that ns = (cycles * mult) >> shift converts a
 * counter of @freq_hz to ns, as precisely as possible while a delta of
 * @max_cycles cycles, added to a base below 1e9 << shift, cannot overflow
 * 64 bits. Returns false if no shift works (freq_hz 0 or absurd).
 */
bool calc_mult_shift(uint64_t freq_hz, uint64_t max_cycles, uint32_t *mult, uint32_t *shift);

/* Shifted-ns arithmetic for a (sec, snsec) base as in the page. */
static inline void snsec_normalise(int64_t *sec, uint64_t *snsec, uint32_t shift)
{
	uint64_t one = NSEC_PER_SEC << shift;

	while (*snsec >= one) {
		*snsec -= one;
		(*sec)++;
	}
}

static inline int64_t ts_to_ns(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * (int64_t)NSEC_PER_SEC + ts->tv_nsec;
}

static inline struct timespec ns_to_ts(int64_t ns)
{
	struct timespec ts;
	int64_t s = ns / (int64_t)NSEC_PER_SEC, r = ns % (int64_t)NSEC_PER_SEC;

	if (r < 0) {
		r += (int64_t)NSEC_PER_SEC;
		s--;
	}
	ts.tv_sec = (time_t)s;
	ts.tv_nsec = (long)r;
	return ts;
}

/* The kernel clock @id in ns, for ids the caller chose itself (the clock
 * ids every Linux kernel has): a failure is impossible, and aborts. */
static inline int64_t kclock_ns(clockid_t id)
{
	struct timespec ts;

	if (clock_gettime(id, &ts) != 0)
		abort();
	return ts_to_ns(&ts);
}

#endif
