/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A fine clock of the page at a counter value: the vDSO's
 *     time = base + ((c - cycle_last) & mask) * mult >> shift
 * in one place, for the library's reads and the daemon's in-process clock
 * (timekeeper.h, tk_clock_ns). Inline and free of 128-bit arithmetic: the
 * library is built for 32-bit targets too.
 */
#ifndef CLOCKD_SHARED_PAGETIME_H
#define CLOCKD_SHARED_PAGETIME_H

#include <errno.h>
#include <stdint.h>

#include <clockd/page.h>
#include "shared/latch.h"

enum page_clock { PAGE_MONO, PAGE_REAL, PAGE_RAW };

/* What one fine clock needs of a copy of the page data. */
struct page_conv {
	uint64_t cycle_last, mask, max_cycles, snsec;
	int64_t sec;
	uint32_t mult, shift;
};

/* Load @which's conversion from @d with relaxed loads: call inside a latch
 * read (clockd_page_read_begin .. clockd_page_read_retry), or on a
 * private copy. */
static inline __attribute__((always_inline)) void page_conv_load(struct page_conv *c,
								  const struct clockd_page_data *d,
								  enum page_clock which)
{
	c->cycle_last = LOAD_RELAXED(&d->cycle_last);
	c->mask = LOAD_RELAXED(&d->mask);
	c->max_cycles = LOAD_RELAXED(&d->max_cycles);
	c->shift = LOAD_RELAXED(&d->shift);
	switch (which) {
	case PAGE_MONO:
		c->mult = LOAD_RELAXED(&d->mult);
		c->sec = LOAD_RELAXED(&d->mono_sec);
		c->snsec = LOAD_RELAXED(&d->mono_snsec);
		break;
	case PAGE_REAL:
		c->mult = LOAD_RELAXED(&d->mult);
		c->sec = LOAD_RELAXED(&d->real_sec);
		c->snsec = LOAD_RELAXED(&d->real_snsec);
		break;
	default:
		c->mult = LOAD_RELAXED(&d->raw_mult);
		c->sec = LOAD_RELAXED(&d->raw_sec);
		c->snsec = LOAD_RELAXED(&d->raw_snsec);
		break;
	}
}

/*
 * The clock at counter value @cycles: 0, or -ESTALE for a delta beyond
 * max_cycles (nobody updated the page for that long), or -EPROTO for a
 * time no daemon writes (seconds that would overflow). A counter read a
 * little behind cycle_last (another CPU's TSC, by a few cycles) is "no time
 * passed", as the vDSO does.
 */
static inline int page_conv_at(const struct page_conv *c, uint64_t cycles, int64_t *sec, uint32_t *nsec)
{
	uint64_t delta = (cycles - c->cycle_last) & c->mask, snsec;
	int64_t s = c->sec;

	if (__builtin_expect(delta > c->max_cycles, 0)) {
		if (delta <= (c->mask >> 1))
			return -ESTALE;
		delta = 0;
	}
	/* The daemon's shift is below 32; masked, a corrupt page's shift
	 * gives nonsense, not undefined behaviour (x86 masks it anyway). */
	snsec = (c->snsec + delta * c->mult) >> (c->shift & 63);
	/* Past a second only when ticks are a second or more apart (HZ=1). */
	if (__builtin_expect(snsec >= 1000000000u, 0)) {
		/* No clock the daemon keeps is near 2^63 s: a page that says
		 * so is not one it wrote (found by page-fuzz). */
		if (__builtin_add_overflow(s, (int64_t)(snsec / 1000000000u), &s))
			return -EPROTO;
		snsec %= 1000000000u;
	}
	*sec = s;
	*nsec = (uint32_t)snsec;
	return 0;
}

#endif
