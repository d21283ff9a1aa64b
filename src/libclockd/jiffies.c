/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Jiffies, HZ and xtime: the kernel-flavoured reads. */
#include <errno.h>
#include <stdbool.h>

#include "libclockd/internal.h"
#include "shared/latch.h"
#include "shared/tickmath.h"

/* jiffies_64 of a live page; 0 with errno set otherwise. */
CLOCKD_EXPORT uint64_t clockd_get_jiffies_64(void)
{
	int err = 0;
	const struct clockd_page *pg = lib_page(&err);
	uint64_t j;
	uint32_t seq;

	if (__builtin_expect(!pg, 0)) {
		errno = err;
		return 0;
	}
	do
		j = LOAD_RELAXED(&clockd_page_read_begin(pg, &seq)->jiffies_64);
	while (clockd_page_read_retry(pg, seq));
	if (__builtin_expect(!lib_page_ok(pg), 0)) {
		lib_page_gone();
		errno = ESTALE;
		return 0;
	}
	return j;
}

/* The out-of-line half of the inline read (clockd.h): tell the caller's
 * file where the page is, even when it cannot serve (it then comes here
 * every time, as it should). */
CLOCKD_EXPORT uint64_t clockd_jiffies_slow_(const struct clockd_page **cache)
{
	uint64_t j = clockd_get_jiffies_64();

	/* Not in a time namespace: the inline monotonic reads would not
	 * add its offset (internal.h). */
	if (cache && !lib_timens_mono_ns())
		__atomic_store_n(cache, __atomic_load_n(&lib_page_ptr, __ATOMIC_ACQUIRE), __ATOMIC_RELEASE);
	return j;
}

CLOCKD_EXPORT uint32_t clockd_jiffies(void)
{
	return (uint32_t)clockd_get_jiffies_64();
}

CLOCKD_EXPORT unsigned int clockd_hz(void)
{
	int err = 0;
	const struct clockd_page *pg = lib_page(&err);

	if (!pg) {
		errno = err;
		return 0;
	}
	return LOAD_RELAXED(&pg->hz);
}

CLOCKD_EXPORT struct timespec clockd_current_kernel_time(void)
{
	struct timespec ts;

	if (clockd_clock_gettime(CLOCKD_REALTIME_COARSE, &ts) != 0) {
		ts.tv_sec = 0;
		ts.tv_nsec = 0;
	}
	return ts;
}

/*
 * v * mul / div, rounded down or up, saturating at UINT64_MAX, in 64-bit
 * arithmetic (the library builds for 32-bit targets, which have no 128-bit
 * integers). Exact when (div - 1) * mul fits 64 bits: here mul and div are
 * at most 1e9, so it is at most 1e18.
 */
static uint64_t muldiv_sat(uint64_t v, uint64_t mul, uint64_t div, bool round_up)
{
	uint64_t q = v / div, r = v % div;
	uint64_t hi, lo = r * mul / div;

	if (round_up && (r * mul) % div)
		lo++;
	if (mul && q > UINT64_MAX / mul)
		return UINT64_MAX;
	hi = q * mul;
	return hi > UINT64_MAX - lo ? UINT64_MAX : hi + lo;
}

/* j ticks in units of 1/@per_sec s, rounded down. */
static uint64_t jiffies_to(uint64_t j, uint64_t per_sec)
{
	unsigned int hz = clockd_hz();

	return hz ? muldiv_sat(j, per_sec, hz, false) : 0;
}

/* @v units of 1/@per_sec s in ticks, rounded up. */
static uint64_t to_jiffies(uint64_t v, uint64_t per_sec)
{
	unsigned int hz = clockd_hz();

	return hz ? muldiv_sat(v, hz, per_sec, true) : 0;
}

CLOCKD_EXPORT uint64_t clockd_jiffies_to_msecs(uint64_t j) { return jiffies_to(j, 1000); }
CLOCKD_EXPORT uint64_t clockd_jiffies_to_usecs(uint64_t j) { return jiffies_to(j, 1000000); }
CLOCKD_EXPORT uint64_t clockd_jiffies_to_nsecs(uint64_t j) { return jiffies_to(j, NSEC_PER_SEC); }
CLOCKD_EXPORT uint64_t clockd_msecs_to_jiffies(uint64_t ms) { return to_jiffies(ms, 1000); }
CLOCKD_EXPORT uint64_t clockd_usecs_to_jiffies(uint64_t us) { return to_jiffies(us, 1000000); }
CLOCKD_EXPORT uint64_t clockd_nsecs_to_jiffies(uint64_t ns) { return to_jiffies(ns, NSEC_PER_SEC); }
