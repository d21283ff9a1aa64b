/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The timer wheel against its contract (src/clockd/timers/wheel.h):
 *  - 1e6 random timers (deltas 0..2^40 spread over every level, a quarter
 *    on 1000 shared deadlines), driven three ways: stepping to
 *    wheel_next_expiry (the daemon's way), tick by tick with timers armed
 *    as the clock runs, and in random jumps. Each timer runs exactly once,
 *    never before its expiry, and no later than the lateness bound of the
 *    header's table for the distance it was armed at (computed here from
 *    the table, not from the wheel's code); the timers of one call run in
 *    (expires, arm order); equal deadlines armed at one tick run together,
 *    in arm order;
 *  - wheel_del of pending, cancelled and already-run timers;
 *  - callbacks that re-add themselves (later, or already due: next call),
 *    delete themselves, delete or move a timer due in the same call;
 *  - 1e6 armed then cancelled leave the wheel empty;
 *  - timers beyond the top level's reach, and the top of the 64-bit range
 *    (the clock stops at UINT64_MAX: no wrap).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clockd/timers/wheel.h"
#include "tests/tap.h"
#include "tests/util.h"

#define NTIMERS 1000000
#define NGROUPS 1000 /* shared deadlines */
#define TOP_LEVEL (WHEEL_LEVELS - 1)

struct rec {
	struct wheel_timer t;
	uint64_t fired_at;  /* the call's @now (or the stepped tick) */
	uint32_t order;     /* global run order */
	uint16_t group;     /* shared deadline + 1, or 0 */
	uint8_t lvl;        /* the table's level for the arm distance */
	uint8_t fires;
};

/* The run being checked: what the callback compares against. */
struct run {
	struct rec *r;
	size_t n;
	uint64_t now, prev_now;  /* this call's and the previous call's @now */
	bool first_in_call;
	bool strict;             /* stepped: each call's @now is the due tick */
	uint64_t last_exp, last_seq;
	uint32_t order;
	size_t early, late, unordered, twice;
	uint64_t worst_late;
};

static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static uint64_t rnd(void)
{
	return tu_rng(&rng_state);
}

/* A delta with a uniformly chosen bit length up to @maxbits: every level
 * gets its share. */
static uint64_t rnd_delta(unsigned maxbits)
{
	unsigned bits = (unsigned)(rnd() % (maxbits + 1));

	return bits ? rnd() & ((UINT64_C(1) << bits) - 1) : 0;
}

/* The header's table: the level a timer armed @d ahead is placed at, at
 * the latest (the first whose "d up to at least 62 * 8^n" covers it). */
static unsigned table_level(uint64_t d)
{
	unsigned n = 0;

	while (n < TOP_LEVEL && d > 62 * (UINT64_C(1) << (3 * n)))
		n++;
	return n;
}

static uint64_t table_lateness(unsigned lvl)
{
	return (UINT64_C(1) << (3 * lvl)) - 1;
}

static void arm(struct wheel *w, struct rec *r, uint64_t expires)
{
	uint64_t from = w->clk; /* the wheel's next tick: where "d" is from */

	r->lvl = (uint8_t)table_level(expires > from ? expires - from : 0);
	wheel_add(w, &r->t, expires);
}

static void check_fire(struct wheel *w, struct wheel_timer *t, void *arg)
{
	struct run *run = arg;
	struct rec *r = (struct rec *)t; /* t is the first member */
	uint64_t e = t->expires;

	(void)w;
	if (r->fires++)
		run->twice++;
	r->fired_at = run->now;
	r->order = run->order++;
	if (e > run->now)
		run->early++;
	/* It must not have been overdue at the previous call already. */
	if (run->prev_now != UINT64_MAX && e <= run->prev_now &&
	    run->prev_now - e >= table_lateness(r->lvl))
		run->late++;
	if (run->strict && e <= run->now && run->now - e > table_lateness(r->lvl))
		run->late++;
	if (run->now - e > run->worst_late && e <= run->now)
		run->worst_late = run->now - e;
	if (!run->first_in_call &&
	    (e < run->last_exp || (e == run->last_exp && t->seq <= run->last_seq)))
		run->unordered++;
	run->first_in_call = false;
	run->last_exp = e;
	run->last_seq = t->seq;
}

static size_t expire(struct wheel *w, struct run *run, uint64_t now)
{
	size_t ran;

	run->now = now;
	run->first_in_call = true;
	ran = wheel_expire(w, now, check_fire, run);
	run->prev_now = now;
	return ran;
}

static void run_reset(struct run *run, struct rec *r, size_t n)
{
	memset(run, 0, sizeof(*run));
	run->r = r;
	run->n = n;
	run->prev_now = UINT64_MAX; /* none yet */
	memset(r, 0, n * sizeof(*r));
}

/* Arm r[0..n) from @start: deltas up to 2^maxbits, a quarter on NGROUPS
 * shared deadlines. */
static void arm_random(struct wheel *w, struct rec *r, size_t n, unsigned maxbits)
{
	uint64_t shared[NGROUPS];

	for (size_t g = 0; g < NGROUPS; g++)
		shared[g] = w->clk + rnd_delta(maxbits);
	for (size_t i = 0; i < n; i++) {
		if (rnd() % 4 == 0) {
			size_t g = rnd() % NGROUPS;

			r[i].group = (uint16_t)(g + 1);
			arm(w, &r[i], shared[g]);
		} else {
			arm(w, &r[i], w->clk + rnd_delta(maxbits));
		}
	}
}

/* Every timer ran once; the whole verdict of one run. */
static bool all_once(const struct rec *r, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (r[i].fires != 1)
			return false;
	return true;
}

/* Timers of one shared deadline, armed in index order at one tick, ran
 * in the same call and in index order. */
static bool groups_in_arm_order(const struct rec *r, size_t n)
{
	static int64_t last[NGROUPS + 1];
	static uint64_t when[NGROUPS + 1];

	for (size_t g = 0; g <= NGROUPS; g++)
		last[g] = -1;
	for (size_t i = 0; i < n; i++) {
		unsigned g = r[i].group;

		if (!g)
			continue;
		if (last[g] >= 0 && ((int64_t)r[i].order <= last[g] || r[i].fired_at != when[g]))
			return false;
		last[g] = r[i].order;
		when[g] = r[i].fired_at;
	}
	return true;
}

static void report(const char *what, const struct run *run, const struct rec *r, size_t n,
		   const struct wheel *w)
{
	tap_ok(run->early == 0, "%s: none early (%zu)", what, run->early);
	tap_ok(run->late == 0, "%s: none later than the table's bound for its level (%zu; worst %" PRIu64 " ticks)",
	       what, run->late, run->worst_late);
	tap_ok(run->twice == 0 && all_once(r, n), "%s: each of %zu ran exactly once", what, n);
	tap_ok(run->unordered == 0, "%s: each call ran its timers in (expires, arm order) (%zu out of order)",
	       what, run->unordered);
	tap_ok(wheel_count(w) == 0 && wheel_next_expiry(w) == UINT64_MAX, "%s: wheel empty after", what);
}

/* 1: arm 1e6 at once, step to wheel_next_expiry until empty. */
static void test_stepping(struct wheel *w, struct rec *r, struct run *run)
{
	size_t steps = 0, idle = 0;

	run_reset(run, r, NTIMERS);
	run->strict = true;
	wheel_init(w, 123456789);
	arm_random(w, r, NTIMERS, 40);
	tap_ok(wheel_count(w) == NTIMERS, "stepping: %d pending", NTIMERS);
	while (wheel_count(w)) {
		uint64_t next = wheel_next_expiry(w);

		if (next < w->clk)
			break; /* reported below: it must be in the future */
		if (!expire(w, run, next))
			idle++;
		steps++;
	}
	tap_diag("stepping: %zu steps, %zu ran nothing (far timers re-queued)", steps, idle);
	report("stepping", run, r, NTIMERS, w);
	tap_ok(groups_in_arm_order(r, NTIMERS), "stepping: equal deadlines armed at one tick ran together, in arm order");
}

/* 2: tick by tick, half armed first, half while the clock runs. */
static void test_ticks(struct wheel *w, struct rec *r, struct run *run)
{
	const size_t n = 200000, first = n / 2;
	size_t armed = first;
	uint64_t now;

	run_reset(run, r, n);
	run->strict = true;
	wheel_init(w, 1000);
	arm_random(w, r, first, 17);
	for (now = 1000; wheel_count(w) || armed < n; now++) {
		expire(w, run, now);
		for (int k = 0; k < 2 && armed < n; k++, armed++)
			arm(w, &r[armed], w->clk + rnd_delta(17));
	}
	tap_diag("ticks: %" PRIu64 " ticks", now - 1000);
	report("ticks", run, r, n, w);
}

/* 3: random jumps, from 1 tick to 2^38 ticks. */
static void test_jumps(struct wheel *w, struct rec *r, struct run *run)
{
	const size_t n = 300000;
	uint64_t now = 77;
	size_t calls = 0;

	run_reset(run, r, n);
	wheel_init(w, now);
	arm_random(w, r, n, 40);
	while (wheel_count(w)) {
		now += 1 + rnd_delta(38);
		expire(w, run, now);
		calls++;
	}
	tap_diag("jumps: %zu calls", calls);
	report("jumps", run, r, n, w);
	tap_ok(groups_in_arm_order(r, n), "jumps: equal deadlines armed at one tick ran together, in arm order");
}

static void count_fire(struct wheel *w, struct wheel_timer *t, void *arg)
{
	(void)w;
	((struct rec *)t)->fires++;
	++*(size_t *)arg;
}

/* 4: delete pending, cancelled and already-run timers. */
static void test_del(struct wheel *w, struct rec *r)
{
	const size_t n = 100000;
	size_t ran = 0, bad_first = 0, bad_again = 0, bad_fired = 0;

	memset(r, 0, n * sizeof(*r));
	wheel_init(w, 0);
	for (size_t i = 0; i < n; i++)
		wheel_add(w, &r[i].t, rnd_delta(20));
	for (size_t i = 0; i < n; i += 2)
		bad_first += !wheel_del(w, &r[i].t) || wheel_pending(&r[i].t);
	for (size_t i = 0; i < n; i += 2)
		bad_again += wheel_del(w, &r[i].t);
	tap_ok(bad_first == 0 && bad_again == 0 && wheel_count(w) == n / 2,
	       "del: pending -> true, cancelled -> false, count follows");
	wheel_expire(w, UINT64_C(1) << 21, count_fire, &ran);
	for (size_t i = 0; i < n; i++)
		bad_fired += r[i].fires != (i % 2 ? 1 : 0);
	tap_ok(ran == n / 2 && bad_fired == 0, "del: cancelled timers never ran, the others once (%zu ran)", ran);
	bad_fired = 0;
	for (size_t i = 1; i < n; i += 2)
		bad_fired += wheel_del(w, &r[i].t) || wheel_pending(&r[i].t);
	tap_ok(bad_fired == 0 && wheel_count(w) == 0, "del: of an already-run timer -> false");
}

/* 5: what callbacks may do. r[0] re-adds itself 10 ticks on, 5 times;
 * r[1] re-adds itself for the current tick (runs in the next call);
 * r[2] deletes itself; r[3] (due with r[4] and r[5]) deletes r[4] and
 * moves r[5] 50 ticks on. */
struct cb_state {
	struct rec *r;
	uint64_t now;
	unsigned periodic, same_tick, self_del_ok, calls_r1;
	bool del4, r5_moved;
};

static void actions(struct wheel *w, struct wheel_timer *t, void *arg)
{
	struct cb_state *s = arg;
	struct rec *r = (struct rec *)t;

	r->fires++;
	r->fired_at = s->now;
	if (r == &s->r[0] && ++s->periodic < 5)
		wheel_add(w, t, s->now + 10);
	if (r == &s->r[1] && ++s->same_tick < 3)
		wheel_add(w, t, s->now);
	if (r == &s->r[2])
		s->self_del_ok = !wheel_del(w, t) && !wheel_pending(t);
	if (r == &s->r[3]) {
		s->del4 = wheel_del(w, &s->r[4].t);
		wheel_add(w, &s->r[5].t, s->now + 50);
		s->r5_moved = true;
	}
}

static void test_callbacks(struct wheel *w, struct rec *r)
{
	struct cb_state s = { .r = r };
	unsigned calls_with_r1 = 0;

	memset(r, 0, 6 * sizeof(*r));
	wheel_init(w, 0);
	wheel_add(w, &r[0].t, 10);
	wheel_add(w, &r[1].t, 20);
	wheel_add(w, &r[2].t, 30);
	wheel_add(w, &r[3].t, 40);
	wheel_add(w, &r[4].t, 40);
	wheel_add(w, &r[5].t, 40);
	for (s.now = 0; s.now <= 200; s.now++) {
		unsigned before = r[1].fires;

		wheel_expire(w, s.now, actions, &s);
		calls_with_r1 += r[1].fires - before;
		if (r[1].fires - before > 1)
			break;
	}
	tap_ok(s.periodic == 5 && r[0].fired_at == 50 && !wheel_pending(&r[0].t),
	       "callbacks: re-add self 10 ticks on: ran 5 times, last at 50 (%u, %" PRIu64 ")", s.periodic, r[0].fired_at);
	tap_ok(r[1].fires == 3 && calls_with_r1 == 3 && r[1].fired_at == 22,
	       "callbacks: re-add self for the current tick: once per call, next tick (%u runs, last %" PRIu64 ")",
	       r[1].fires, r[1].fired_at);
	tap_ok(s.self_del_ok && r[2].fires == 1, "callbacks: delete self: false, not pending");
	tap_ok(s.del4 && r[4].fires == 0, "callbacks: delete a timer due in the same call: true, it never runs");
	tap_ok(s.r5_moved && r[5].fires == 1 && r[5].fired_at == 90,
	       "callbacks: move a timer due in the same call: runs once, at the new time (%" PRIu64 ")", r[5].fired_at);
	tap_ok(wheel_count(w) == 0, "callbacks: wheel empty after");
}

/* 6: 1e6 armed, all cancelled. */
static void test_cancel_all(struct wheel *w, struct rec *r)
{
	size_t ran = 0;
	bool bits = false, heads = false;

	memset(r, 0, NTIMERS * sizeof(*r));
	wheel_init(w, 5);
	for (size_t i = 0; i < NTIMERS; i++)
		wheel_add(w, &r[i].t, 5 + rnd_delta(40));
	for (size_t i = NTIMERS; i-- > 0;)
		wheel_del(w, &r[(i * 7919) % NTIMERS].t); /* a scattered order */
	for (unsigned l = 0; l < WHEEL_LEVELS; l++)
		bits |= w->pending[l] != 0;
	for (unsigned b = 0; b < WHEEL_BUCKETS; b++)
		heads |= w->bucket[b] != NULL;
	tap_ok(wheel_count(w) == 0 && wheel_next_expiry(w) == UINT64_MAX && !bits && !heads,
	       "cancel all: 1e6 armed then cancelled leave no timer, bucket or bit");
	wheel_expire(w, UINT64_MAX, count_fire, &ran);
	tap_ok(ran == 0, "cancel all: nothing runs after");
}

/* 7: timers beyond the top level's reach on 10 deadlines, run by random
 * jumps, with more armed for the same deadlines after each jump: a parked
 * timer comes back closer while later-armed ones with its deadline already
 * sit in the wheel (their order must still hold); then a jump to the end. */
static void test_far(struct wheel *w, struct rec *r, struct run *run)
{
	const size_t n = 1000, extra = 20000;
	uint64_t e[10], now = 999;
	size_t armed = n;

	run_reset(run, r, n + extra);
	wheel_init(w, now);
	for (size_t g = 0; g < 10; g++)
		e[g] = now + (UINT64_C(1) << 39) + (rnd() & ((UINT64_C(1) << 42) - 1));
	for (size_t i = 0; i < n; i++)
		arm(w, &r[i], e[i % 10]);
	while (wheel_count(w)) {
		now += 1 + rnd_delta(36);
		expire(w, run, now);
		for (size_t g = 0; g < 10 && armed < n + extra; g++)
			if (e[g] > w->clk)
				arm(w, &r[armed++], e[g]);
	}
	tap_diag("far: %zu armed while running", armed - n);
	report("far (jumps)", run, r, armed, w);

	run_reset(run, r, n);
	wheel_init(w, 0);
	for (size_t i = 0; i < n; i++)
		arm(w, &r[i], i < n / 2 ? UINT64_MAX - (rnd() >> 1) : UINT64_MAX - (rnd() >> 40));
	expire(w, run, UINT64_MAX - (UINT64_C(1) << 62));
	expire(w, run, UINT64_MAX);
	report("far (jump to UINT64_MAX)", run, r, n, w);
}

/* 8: the top of the range. */
static void test_top(struct wheel *w, struct rec *r, struct run *run)
{
	const size_t n = 100000;
	const uint64_t start = UINT64_MAX - (UINT64_C(1) << 24);
	size_t ran = 0;

	run_reset(run, r, n);
	run->strict = true;
	wheel_init(w, start);
	for (size_t i = 0; i < n; i++) {
		uint64_t e = i < 1000 ? UINT64_MAX - i % 100 : start + rnd_delta(24);

		arm(w, &r[i], e);
	}
	while (wheel_count(w))
		expire(w, run, wheel_next_expiry(w));
	report("top of range (stepped)", run, r, n, w);
	tap_ok(r[0].fired_at == UINT64_MAX && run->prev_now == UINT64_MAX,
	       "top of range: a timer at UINT64_MAX ran at tick UINT64_MAX");

	memset(r, 0, 2 * sizeof(*r));
	wheel_add(w, &r[0].t, 5);          /* long past */
	wheel_add(w, &r[1].t, UINT64_MAX);
	tap_ok(wheel_next_expiry(w) == UINT64_MAX && wheel_count(w) == 2,
	       "top of range: after the last tick, new timers are due at UINT64_MAX");
	tap_ok(wheel_expire(w, UINT64_MAX - 1, count_fire, &ran) == 0,
	       "top of range: a call for a tick already processed runs nothing");
	wheel_expire(w, UINT64_MAX, count_fire, &ran);
	tap_ok(ran == 2 && r[0].fires == 1 && r[1].fires == 1 && wheel_count(w) == 0,
	       "top of range: they run at the next wheel_expire(UINT64_MAX) (no wrap)");
}

int main(void)
{
	static struct wheel w;
	static struct run run;
	struct rec *r = calloc(NTIMERS, sizeof(*r));

	if (!r)
		tap_bail("out of memory");
	/* stepping, ticks, jumps, del, callbacks, cancel all, far, top */
	tap_plan(7 + 5 + 6 + 3 + 6 + 2 + 10 + 9);
	test_stepping(&w, r, &run);
	test_ticks(&w, r, &run);
	test_jumps(&w, r, &run);
	test_del(&w, r);
	test_callbacks(&w, r);
	test_cancel_all(&w, r);
	test_far(&w, r, &run);
	test_top(&w, r, &run);
	free(r);
	return tap_done();
}
