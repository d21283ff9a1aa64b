/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Helpers shared by the time-page tests: a private page written with the
 * daemon's own code (pagefile.c, latch.c), data that is a pure function of a
 * step count (so a reader can tell a torn copy from a good one), a plausible
 * clock for the public API, and CPU pinning.
 */
#ifndef CLOCKD_TESTS_PAGE_TESTPAGE_H
#define CLOCKD_TESTS_PAGE_TESTPAGE_H

#include <stdbool.h>
#include <stdint.h>

#include "clockd/pagefile.h"

/* jiffies_64 of step 0: the low word wraps 300000 steps in, so the two
 * halves of jiffies_64 change together during a run. */
#define TP_J0 (UINT64_C(0x100000000) - 300000)
#define TP_HZ 1000u
/* Generous: a loaded machine must not make the test page look stale. */
#define TP_STALE_NS (UINT64_C(10) * 1000000000)

struct test_page {
	char dir[256];
	char path[300];
	struct pagefile pf;
};

/* A page in a fresh private temp dir, header filled, not yet taken.
 * -1 with a message on stderr. */
int tp_create(struct test_page *tp);
/* Unmap, remove the page and its dir. */
void tp_destroy(struct test_page *tp);

/* The data of step @n: jiffies_64 = TP_J0 + n, kernel_mono_ns = n, every
 * other field a hash of (n, field), so both halves of every 64-bit field
 * change at every step. pad0 and reserved are 0 (the latch skips them). */
void tp_fill(struct clockd_page_data *d, uint64_t n);
/* The step of a copy of tp_fill data (from its jiffies_64). */
static inline uint64_t tp_step(const struct clockd_page_data *d)
{
	return d->jiffies_64 - TP_J0;
}
/* The first field where @a and @b differ, or NULL if they are equal. */
const char *tp_diff(const struct clockd_page_data *a, const struct clockd_page_data *b);

/* A clock the library can read (CLOCKD_VCLOCK_POSIX on the kernel's
 * CLOCK_MONOTONIC_RAW), sampled now. Every time in it is a function of the
 * raw counter alone, so a reader's results can never go backwards; its
 * MONOTONIC is the raw counter + TP_MONO_OFFSET_SEC, so a page read is
 * told apart from the kernel's clock. */
#define TP_MONO_OFFSET_SEC INT64_C(100000)
void tp_fill_clock(struct clockd_page_data *d);

#endif
