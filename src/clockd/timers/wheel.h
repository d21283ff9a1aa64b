/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A hierarchical timer wheel for jiffies timers, one per CPU thread, after
 * the Linux kernel's non-cascading design (kernel/time/timer.c since 4.8).
 *
 * WHEEL_LEVELS levels of 64 buckets; level n's buckets are 8^n ticks wide.
 * A timer armed d ticks ahead goes, once, to the lowest level whose 64
 * buckets reach its expiry, in the bucket of its expiry rounded UP to the
 * level's granularity, and stays there until that bucket comes due: arm and
 * cancel are O(1), nothing is ever moved between levels (no cascade), and
 * the price is lateness. A timer never runs early; it runs at most
 * (granularity - 1) ticks late for the level it was placed at:
 *
 *   level  granularity (ticks)  lateness <=    placed here for d up to at least
 *     0             1                  0                      62
 *     1             8                  7                     496
 *     2            64                 63                   3 968
 *     3           512                511                  31 744
 *     4         4 096              4 095                 253 952
 *     5        32 768             32 767               2 031 616
 *     6       262 144            262 143              16 252 928
 *     7     2 097 152          2 097 151             130 023 424
 *     8    16 777 216         16 777 215           1 040 187 392
 *     9   134 217 728        134 217 727           8 321 499 136
 *    10 1 073 741 824      1 073 741 823          66 571 993 088
 *    11 8 589 934 592      8 589 934 591         532 575 944 704
 *
 * "Placed here for d up to at least 62 * 8^n": a timer armed d <= 62 * 8^n
 * ticks ahead lands at level n or lower (the exact limit depends on the
 * alignment of the current tick, up to 64 * 8^n). So the lateness is also
 * at most 8/62 (13 %) of d for any timer at level 1 and up; at HZ=1000,
 * level 11's granularity is 99 days and its reach 16.9 years.
 *
 * Timers further ahead than level 11 reaches are parked in level 11's
 * farthest bucket and re-queued, closer, when it comes due (the callback
 * does not run then); they end at level 11 or lower, lateness <= 8^11 - 1.
 *
 * Wrap: none. Ticks and expiries are absolute 64-bit counts (2^64 jiffies
 * at HZ=1000 last 584 million years), compared as plain integers, so the
 * whole range 0..UINT64_MAX is usable. Near the top, a timer whose rounded
 * expiry would pass UINT64_MAX is parked one granule early and re-queued
 * like a far timer; a timer at UINT64_MAX runs at tick UINT64_MAX. The
 * wheel's clock stops there: after wheel_expire(w, UINT64_MAX), timers
 * armed (for any expiry) run at the next wheel_expire(w, UINT64_MAX).
 *
 * Order: the timers run by one wheel_expire call run in (expires, arm
 * order). Timers with equal expiries armed at the same tick share a bucket,
 * so they always run in arm order. Timers with equal expiries armed at
 * different ticks may sit at different levels: the later one, placed at a
 * finer level, can run in an earlier wheel_expire call than the earlier
 * one. No non-cascading wheel can avoid that (the earlier timer would need
 * the later one's lateness, i.e. none); the kernel's wheel behaves alike.
 *
 * Intrusive: the wheel never allocates; the caller owns every timer and
 * must not free or reuse a pending one. Not thread-safe: one wheel per
 * thread.
 */
#ifndef CLOCKD_WHEEL_H
#define CLOCKD_WHEEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define WHEEL_LVL_BITS 6                       /* 64 buckets a level */
#define WHEEL_LVL_SIZE (1u << WHEEL_LVL_BITS)
#define WHEEL_CLK_SHIFT 3                      /* each level 8x coarser */
#define WHEEL_LEVELS 12
#define WHEEL_BUCKETS (WHEEL_LEVELS * WHEEL_LVL_SIZE)
#define WHEEL_DUE UINT16_MAX /* taken from its bucket, about to run */

/* A timer; zero it (or wheel_timer_init) before first use. The wheel owns
 * the link fields while the timer is pending; read expires and seq freely. */
struct wheel_timer {
	struct wheel_timer *next;
	struct wheel_timer **pprev; /* NULL while not pending */
	uint64_t expires;           /* tick at (or after) which it runs */
	uint64_t seq;               /* arm order, set by wheel_add */
	uint16_t bucket;            /* level * 64 + index, or WHEEL_DUE */
};

struct wheel {
	uint64_t clk;     /* the next tick to process */
	uint64_t seq;     /* arm counter */
	size_t count;     /* pending timers */
	struct wheel_timer *due; /* taken from the buckets, about to run */
	uint64_t pending[WHEEL_LEVELS]; /* bit i: bucket i of the level is not empty */
	struct wheel_timer *bucket[WHEEL_BUCKETS];
};

/* Called for each expired timer, which is no longer pending. It may add
 * or delete any timer, itself included; a timer it adds for a tick <= the
 * wheel_expire call's @now runs in the next call. It must not call
 * wheel_expire or wheel_init on the same wheel. */
typedef void wheel_fn(struct wheel *w, struct wheel_timer *t, void *arg);

/* An empty wheel whose first unprocessed tick is @now. */
void wheel_init(struct wheel *w, uint64_t now);
void wheel_timer_init(struct wheel_timer *t);

/* Arm @t for tick @expires (one already due runs in the next wheel_expire
 * call); a pending @t is moved, as if deleted first. O(1). */
void wheel_add(struct wheel *w, struct wheel_timer *t, uint64_t expires);
/* Disarm @t; true if it was pending. O(1). */
bool wheel_del(struct wheel *w, struct wheel_timer *t);
bool wheel_pending(const struct wheel_timer *t);
/* Pending timers. */
size_t wheel_count(const struct wheel *w);

/* The tick at which the next bucket comes due: what to sleep until. It
 * is never before the earliest expiry, and is later by at most that
 * timer's lateness bound (a parked far timer's bucket runs no callback).
 * UINT64_MAX if no timer is pending (or the next is due at UINT64_MAX). */
uint64_t wheel_next_expiry(const struct wheel *w);

/* Process every tick up to and including @now: each timer whose bucket
 * comes due runs @fn, in (expires, arm order); returns how many ran. A
 * @now before the wheel's clock runs nothing. */
size_t wheel_expire(struct wheel *w, uint64_t now, wheel_fn *fn, void *arg);

#endif
