/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Missed wake-ups (issue #18): arm, cancel and re-arm races at the same
 * deadline, REARM_N iterations (default 1000000) through the timer bases
 * (src/clockd/timers/timerbase.h) in this process, no daemon. Not timed.
 *
 * Each iteration is one timer id in a batch whose timers all share one
 * deadline D (a little in the past, now, or a little ahead); per id one of:
 *   0  ARM g at D, CANCEL, ARM g+1 at D, and once g+1 fired, ARM g+2 at
 *      the same D again (now past): it fires at once;
 *   1  ARM g at D, ARM g+1 at D (a re-arm, no cancel);
 *   2  ARM g an hour ahead, ARM g+1 at D (moved to the shared deadline);
 *   3  ARM g at D, CANCEL (nothing to fire, or the one that beat it).
 * The last arm of each id fires exactly once; an arm superseded in the
 * race fires at most once (a client drops it by its generation) and never
 * if it was an hour ahead; every FIRE carries its arm's expiry, and none
 * is in the ring before the bases' clock reads that expiry (timer_lead_ns
 * 0 here). Once a batch's last arms have fired, an ARM at a past deadline
 * on each ring pair (a sentinel) fires after everything submitted before
 * it was handled: no record of the batch may come after it.
 *
 * Two clocks: the kernel's, and one that runs 2^-10 slow, so that the
 * bases' timerfd (set on the kernel's clock) fires before the deadline on
 * theirs and they re-arm it for the rest (a second wake-up per deadline).
 *
 * The suspect of issue #18, arm_timerfd skipping a re-arm for the deadline
 * it last armed (armed_kns) after the one-shot timerfd fired: it cannot
 * lose a wake-up. A recomputed deadline is the kernel time now plus what
 * is left (>= 0) on the bases' clock, so once the timerfd has fired (the
 * kernel is past the armed deadline) it is later than the armed one, and
 * equal only in the same nanosecond; a timerfd that fired and is not yet
 * read keeps epoll awake; and handle_events forgets armed_kns when it
 * reads the timerfd, so even that nanosecond is covered. With that line
 * removed this test still passes (checked): it tests the outcome, every
 * last arm fired once and none early, not that line.
 */
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <clockd/clockd.h>
#include "tests/tap.h"
#include "timers/tbclient.h"

#define BATCH 512u
#define SENTINEL BATCH /* ring pair k's sentinel is timer id SENTINEL + k */
#define MAX_TIMERS (BATCH + TIMER_SHM_MAX_CPUS)
#define RING_SLOTS 4096u
#define WAIT_NS (30 * 1000000000ull) /* generous: a loaded machine */
#define HOUR_NS (3600 * 1000000000ull)

static int ntests;
#define OK(cond, ...) (ntests++, tap_ok((cond), __VA_ARGS__))

/* ---- the slow clock ---- */

static uint64_t slow_k0, slow_r0;

static uint64_t kclock(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The kernel's clocks, less 1/1024 of the time since the start. */
static int slow_now_ns(void *ctx, bool realtime, uint64_t *ns)
{
	uint64_t k = kclock(CLOCK_MONOTONIC), lag = (k - slow_k0) >> 10;

	(void)ctx;
	*ns = realtime ? slow_r0 + (k - slow_k0) - lag : k - lag;
	return 0;
}

static uint64_t slow_jiffies(void *ctx)
{
	uint64_t ns;

	slow_now_ns(ctx, false, &ns);
	return ((uint64_t)(uint32_t)-300000) + ns / 1000000u;
}

/* ---- one run ---- */

struct id_state {
	uint32_t gen0;     /* first generation armed in this batch */
	uint32_t final;    /* the generation that must fire once; 0: none */
	uint8_t pattern;
	uint8_t fired[3];  /* by generation - gen0 */
	bool far0;         /* gen0 was armed an hour ahead */
};

struct run {
	const struct tb_clock *clk;
	struct timer_bases *tb;
	struct tbc t;
	struct id_state id[BATCH];
	uint32_t gen[MAX_TIMERS];
	uint64_t deadline;
	unsigned outstanding;   /* last arms of the batch not fired yet */
	unsigned sentinels;     /* sentinel FIREs seen this batch */
	/* totals */
	uint64_t iterations, fires, superseded_fired, early, bad, dup, late_records, timeouts;
};

static uint64_t run_now(const struct run *r)
{
	uint64_t ns;

	r->clk->now_ns(r->clk->ctx, false, &ns);
	return ns;
}

static struct timerrec arm(uint32_t id, uint32_t gen, uint64_t expires)
{
	struct timerrec t = { .op = TREC_ARM, .clock = CTL_CLOCK_MONOTONIC, .flags = CTL_ARM_ABSTIME,
			      .timer_id = id, .gen = gen, .expires = expires };

	return t;
}

static struct timerrec cancel(uint32_t id, uint32_t gen)
{
	struct timerrec t = { .op = TREC_CANCEL, .timer_id = id, .gen = gen };

	return t;
}

static unsigned pair_of(const struct run *r, uint32_t id)
{
	return id % r->t.n;
}

/* One FIRE (or anything else) popped at the run's clock @now. */
static void take(struct run *r, const struct timerrec *rec, uint64_t now, bool batch_open)
{
	struct id_state *s;
	uint32_t g;

	if (rec->op != TREC_FIRE) {
		r->bad++;
		return;
	}
	if (rec->expires > now)
		r->early++;
	if (rec->timer_id >= SENTINEL && rec->timer_id < MAX_TIMERS) {
		r->sentinels += rec->gen == r->gen[rec->timer_id];
		r->bad += rec->gen != r->gen[rec->timer_id];
		return;
	}
	if (rec->timer_id >= BATCH || !batch_open) {
		r->late_records++;
		return;
	}
	s = &r->id[rec->timer_id];
	if (rec->gen < s->gen0 || rec->gen > s->gen0 + 2) {
		r->late_records++;
		return;
	}
	g = rec->gen - s->gen0;
	if (s->fired[g]++) {
		r->dup++;
		return;
	}
	if (rec->expires != (g == 0 && s->far0 ? r->deadline + HOUR_NS : r->deadline) || (g == 0 && s->far0))
		r->bad++;
	r->fires++;
	if (rec->gen != s->final) {
		r->superseded_fired++;
		return;
	}
	r->outstanding--;
	if (s->pattern == 0 && g == 1) {
		/* Fired: the same deadline again, now past. */
		s->final = s->gen0 + 2;
		r->gen[rec->timer_id] = s->final;
		r->outstanding++;
		struct timerrec a = arm(rec->timer_id, s->final, r->deadline);
		tbc_push(&r->t, pair_of(r, rec->timer_id), &a);
	}
}

/* Pop every ring pair until @done says so or the wait ends; false then. */
static bool pump(struct run *r, bool (*done)(const struct run *), bool batch_open)
{
	uint64_t end = tbc_kns() + WAIT_NS;
	struct timerrec rec[256];

	while (!done(r)) {
		bool any = false;

		for (unsigned k = 0; k < r->t.n; k++) {
			int n = tbc_pop(&r->t, k, rec, 256);
			uint64_t now = run_now(r);

			for (int i = 0; i < n; i++)
				take(r, &rec[i], now, batch_open);
			any = any || n > 0;
		}
		if (!any) {
			if (tbc_kns() > end)
				return false;
			tbc_sleep_us(20);
		}
	}
	return true;
}

static bool all_fired(const struct run *r)
{
	return r->outstanding == 0;
}

static bool sentinels_back(const struct run *r)
{
	return r->sentinels == r->t.n;
}

static void submit(struct run *r, uint32_t id, uint8_t pattern)
{
	struct id_state *s = &r->id[id];
	uint32_t g = r->gen[id] + 1;
	unsigned k = pair_of(r, id);
	struct timerrec a;

	memset(s, 0, sizeof(*s));
	s->gen0 = g;
	s->pattern = pattern;
	s->far0 = pattern == 2;
	a = arm(id, g, s->far0 ? r->deadline + HOUR_NS : r->deadline);
	tbc_push(&r->t, k, &a);
	if (pattern == 0 || pattern == 3) {
		a = cancel(id, g);
		tbc_push(&r->t, k, &a);
	}
	if (pattern != 3) {
		a = arm(id, g + 1, r->deadline);
		tbc_push(&r->t, k, &a);
		s->final = g + 1;
		r->outstanding++;
	}
	r->gen[id] = pattern == 3 ? g : g + 1;
}

static bool batch(struct run *r, unsigned n, unsigned b)
{
	/* ns relative to now: a little past, now, a little and more ahead */
	static const int64_t offs[] = { -20000, 0, 5000, 20000, 50000, 200000 };
	uint64_t now = run_now(r);

	r->deadline = (uint64_t)((int64_t)now + offs[b % (sizeof(offs) / sizeof(offs[0]))]);
	r->outstanding = 0;
	r->sentinels = 0;
	for (uint32_t id = 0; id < n; id++)
		submit(r, id, (uint8_t)((id + b) % 4));
	if (!pump(r, all_fired, true)) {
		r->timeouts++;
		tap_diag("batch %u: %u last arms never fired (deadline %" PRIu64 ", now %" PRIu64 ")", b,
			 r->outstanding, r->deadline, run_now(r));
		return false;
	}
	for (unsigned k = 0; k < r->t.n; k++) {
		struct timerrec a = arm(SENTINEL + k, ++r->gen[SENTINEL + k], 0);

		tbc_push(&r->t, k, &a);
	}
	if (!pump(r, sentinels_back, true)) {
		r->timeouts++;
		tap_diag("batch %u: the sentinels did not come back", b);
		return false;
	}
	r->iterations += n;
	return true;
}

static void run(const char *name, const struct tb_clock *clk, const struct tb_params *base, uint64_t iters)
{
	struct tb_params p = *base;
	static struct run r;
	uint64_t t0 = tbc_kns();
	bool ok = true;

	memset(&r, 0, sizeof(r));
	r.clk = clk;
	p.clock = *clk;
	r.tb = tbc_bases_start(&p);
	if (!tbc_open(&r.t, r.tb))
		tap_bail("tb_client_new: %s", strerror(errno));
	for (unsigned b = 0; ok && r.iterations < iters; b++) {
		uint64_t left = iters - r.iterations;

		ok = batch(&r, left < BATCH ? (unsigned)left : BATCH, b);
	}
	tbc_close(&r.t, r.tb);
	tbc_bases_stop(r.tb);
	tap_diag("%s: %" PRIu64 " iterations in %.1f s: %" PRIu64 " FIREs, %" PRIu64
		 " of them of a superseded arm", name, r.iterations, (double)(tbc_kns() - t0) / 1e9, r.fires,
		 r.superseded_fired);
	OK(ok && r.iterations == iters && r.timeouts == 0,
	   "%s clock: the last arm of every one of %" PRIu64 " iterations fired (none missed)", name, iters);
	OK(r.dup == 0, "%s clock: no arm fired twice (%" PRIu64 ")", name, r.dup);
	OK(r.early == 0, "%s clock: no FIRE before its expiry on the bases' clock (%" PRIu64 ")", name, r.early);
	OK(r.bad == 0 && r.late_records == 0,
	   "%s clock: every FIRE for its arm's expiry, none for an arm an hour ahead, none after its "
	   "batch's sentinel (%" PRIu64 " wrong, %" PRIu64 " late)", name, r.bad, r.late_records);
}

int main(void)
{
	struct tb_params p = { .priority = 0, .hz = 1000, .ring_slots = RING_SLOTS, .max_timers = MAX_TIMERS };
	const char *s = getenv("REARM_N");
	uint64_t n = s && *s ? strtoull(s, NULL, 10) : 1000000;
	struct tb_clock slow = { .now_ns = slow_now_ns, .jiffies = slow_jiffies };
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set) < 0)
		tap_bail("sched_getaffinity: %s", strerror(errno));
	for (unsigned cpu = 0; cpu < TIMER_SHM_MAX_CPUS; cpu++)
		if (CPU_ISSET(cpu, &set))
			p.cpu_mask |= 1ull << cpu;
	slow_k0 = kclock(CLOCK_MONOTONIC);
	slow_r0 = kclock(CLOCK_REALTIME);
	run("kernel", &tbc_clock, &p, n / 2);
	run("slow", &slow, &p, n - n / 2);
	tap_plan(ntests);
	return tap_done();
}
