/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The daemon's timer wheel (src/clockd/timers/wheel.c) against libevent's timers
 * (evtimer_add/evtimer_del on a plain event_base, a min-heap), side by side
 * in one process, with 1e3, 1e5 and 1e6 timers pending:
 *  - arm+cancel: one timer armed for a random delay (1 tick .. 2^22, i.e.
 *    up to 70 minutes at HZ=1000; libevent: the same in ms) and cancelled
 *    at once, cycling through 1024 timers created once, while the N others
 *    stay pending with delays of the same spread;
 *  - cancel+rearm: a random one of the N pending timers cancelled and
 *    armed again (a timeout pushed back: the heap's costly delete);
 *  - expiry: the N timers re-armed for 1..1000 ticks (libevent: 0..999 us)
 *    and all run: the wheel ticked by ticks past the last, libevent's loop
 *    run once they are all past due; the cost per timer run.
 * Rounds are interleaved (wheel, libevent, wheel, ...) and each contender's
 * best round is its cost (noise only adds time); medians beside it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <event2/event.h>

#include "clockd/timers/wheel.h"

#define ROUNDS 5
#define OPS 1000000           /* arm+cancel pairs per round */
#define CYCLED 1024           /* timers armed and cancelled in turn */
#define NDELAYS 4096
#define LONG_BITS 22          /* pending delays: up to 2^22 ticks / ms */
#define SHORT_SPAN 1000       /* expiry: delays 1..1000 ticks / 0..999 us */

enum { WHEEL, LIBEVENT, NCONT };
static const char *const cont_name[NCONT] = { "wheel", "libevent" };

struct bench {
	size_t n;
	struct wheel w;
	struct wheel_timer *wt;     /* n pending, then CYCLED cycled */
	struct event_base *base;
	struct event **ev;          /* likewise */
	uint64_t delay[NDELAYS];    /* ticks (wheel) or ms (libevent) */
	size_t pick[NDELAYS];       /* random timers among the n */
	size_t fired;
};

static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static struct timeval ms_tv(uint64_t ms)
{
	return (struct timeval){ .tv_sec = (time_t)(ms / 1000), .tv_usec = (suseconds_t)(ms % 1000 * 1000) };
}

static void ev_count(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	++*(size_t *)arg;
}

static void wheel_count_fn(struct wheel *w, struct wheel_timer *t, void *arg)
{
	(void)w;
	(void)t;
	++*(size_t *)arg;
}

/* The n background timers, pending with long delays. */
static void arm_background(struct bench *b)
{
	for (size_t i = 0; i < b->n; i++) {
		struct timeval tv = ms_tv(1 + b->delay[i % NDELAYS]);

		wheel_add(&b->w, &b->wt[i], b->w.clk + 1 + b->delay[i % NDELAYS]);
		evtimer_add(b->ev[i], &tv);
	}
}

static int bench_init(struct bench *b, size_t n)
{
	size_t all = n + CYCLED;

	b->n = n;
	b->wt = calloc(all, sizeof(*b->wt));
	b->ev = calloc(all, sizeof(*b->ev));
	b->base = event_base_new();
	if (!b->wt || !b->ev || !b->base)
		return -1;
	for (size_t i = 0; i < all; i++) {
		b->ev[i] = evtimer_new(b->base, ev_count, &b->fired);
		if (!b->ev[i])
			return -1;
	}
	for (size_t i = 0; i < NDELAYS; i++)
		b->delay[i] = rnd() & ((UINT64_C(1) << (1 + rnd() % LONG_BITS)) - 1);
	for (size_t i = 0; i < NDELAYS; i++)
		b->pick[i] = rnd() % n;
	wheel_init(&b->w, 1000000);
	arm_background(b);
	return 0;
}

static void bench_fini(struct bench *b)
{
	if (b->ev)
		for (size_t i = 0; i < b->n + CYCLED; i++)
			if (b->ev[i])
				event_free(b->ev[i]);
	if (b->base)
		event_base_free(b->base);
	free(b->ev);
	free(b->wt);
}

static double arm_cancel_wheel(struct bench *b)
{
	struct wheel_timer *cyc = b->wt + b->n;
	double t0 = now_ns();

	for (size_t i = 0; i < OPS; i++) {
		wheel_add(&b->w, &cyc[i % CYCLED], b->w.clk + 1 + b->delay[i % NDELAYS]);
		wheel_del(&b->w, &cyc[i % CYCLED]);
	}
	return (now_ns() - t0) / OPS;
}

/* Cancel a random one of the n pending timers and arm it again: the
 * cancel of a timer pending for a while (a heap's costly case: the hole
 * is filled from the bottom). Its delay stays the same spread. */
static double rearm_wheel(struct bench *b)
{
	double t0 = now_ns();

	for (size_t i = 0; i < OPS; i++) {
		struct wheel_timer *t = &b->wt[b->pick[i % NDELAYS]];

		wheel_del(&b->w, t);
		wheel_add(&b->w, t, b->w.clk + 1 + b->delay[i % NDELAYS]);
	}
	return (now_ns() - t0) / OPS;
}

static double rearm_libevent(struct bench *b)
{
	double t0 = now_ns();

	for (size_t i = 0; i < OPS; i++) {
		struct event *ev = b->ev[b->pick[i % NDELAYS]];
		struct timeval tv = ms_tv(1 + b->delay[i % NDELAYS]);

		evtimer_del(ev);
		evtimer_add(ev, &tv);
	}
	return (now_ns() - t0) / OPS;
}

static double arm_cancel_libevent(struct bench *b)
{
	struct event **cyc = b->ev + b->n;
	double t0 = now_ns();

	for (size_t i = 0; i < OPS; i++) {
		struct timeval tv = ms_tv(1 + b->delay[i % NDELAYS]);

		evtimer_add(cyc[i % CYCLED], &tv);
		evtimer_del(cyc[i % CYCLED]);
	}
	return (now_ns() - t0) / OPS;
}

/* Re-arm the n timers 1..SHORT_SPAN ticks on, run them all; ns per run
 * (or -1 if not all ran). The background is armed again after. */
static double expire_wheel(struct bench *b)
{
	uint64_t start = b->w.clk, end = start + SHORT_SPAN + SHORT_SPAN / 8;
	double t0;

	for (size_t i = 0; i < b->n; i++)
		wheel_add(&b->w, &b->wt[i], start + 1 + rnd() % SHORT_SPAN);
	b->fired = 0;
	t0 = now_ns();
	for (uint64_t now = start; now <= end; now++)
		wheel_expire(&b->w, now, wheel_count_fn, &b->fired);
	t0 = (now_ns() - t0) / (double)b->n;
	for (size_t i = 0; i < b->n; i++)
		wheel_add(&b->w, &b->wt[i], b->w.clk + 1 + b->delay[i % NDELAYS]);
	return b->fired == b->n ? t0 : -1;
}

static double expire_libevent(struct bench *b)
{
	struct timespec past = { .tv_nsec = 2 * 1000 * 1000 };
	double t0, t;

	for (size_t i = 0; i < b->n; i++) {
		struct timeval tv = { .tv_usec = (suseconds_t)(rnd() % SHORT_SPAN) };

		evtimer_add(b->ev[i], &tv);
	}
	b->fired = 0;
	nanosleep(&past, NULL);
	t0 = now_ns();
	while (b->fired < b->n && event_base_loop(b->base, EVLOOP_NONBLOCK) >= 0)
		;
	t = (now_ns() - t0) / (double)b->n;
	arm_background(b);
	return t;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Sort each contender's rounds; print best and median, and the ratio. */
static double summarize(const char *what, size_t n, double ns[NCONT][ROUNDS])
{
	double best[NCONT], med[NCONT];

	for (int c = 0; c < NCONT; c++) {
		qsort(ns[c], ROUNDS, sizeof(double), cmp_double);
		best[c] = ns[c][0];
		med[c] = ns[c][ROUNDS / 2];
	}
	printf("  %-12s %8zu  %10.1f (%7.1f)  %10.1f (%7.1f)  %6.3f (%5.3f)\n", what, n, best[WHEEL],
	       med[WHEEL], best[LIBEVENT], med[LIBEVENT], best[WHEEL] / best[LIBEVENT], med[WHEEL] / med[LIBEVENT]);
	return best[WHEEL] / best[LIBEVENT];
}

static int run_size(size_t n, double *arm_ratio, double *rearm_ratio)
{
	double arm[NCONT][ROUNDS], rearm[NCONT][ROUNDS], expi[NCONT][ROUNDS];
	struct bench *b = calloc(1, sizeof(*b));
	int ret = -1;

	if (!b || bench_init(b, n) < 0) {
		fprintf(stderr, "bench-wheel: out of memory at %zu timers\n", n);
		goto free_bench;
	}
	arm_cancel_wheel(b); /* warm up */
	arm_cancel_libevent(b);
	for (int r = 0; r < ROUNDS; r++) {
		arm[WHEEL][r] = arm_cancel_wheel(b);
		arm[LIBEVENT][r] = arm_cancel_libevent(b);
		rearm[WHEEL][r] = rearm_wheel(b);
		rearm[LIBEVENT][r] = rearm_libevent(b);
		expi[WHEEL][r] = expire_wheel(b);
		expi[LIBEVENT][r] = expire_libevent(b);
		if (expi[WHEEL][r] < 0 || b->fired != n) {
			fprintf(stderr, "bench-wheel: not every timer ran at %zu\n", n);
			goto free_bench;
		}
	}
	*arm_ratio = summarize("arm+cancel", n, arm);
	*rearm_ratio = summarize("cancel+rearm", n, rearm);
	summarize("expiry", n, expi);
	ret = 0;
free_bench:
	if (b)
		bench_fini(b);
	free(b);
	return ret;
}

int main(void)
{
	static const size_t sizes[] = { 1000, 100000, 1000000 };
	double arm = 0, rearm = 0;

	printf("ns per operation, best of %d interleaved rounds (median):\n", ROUNDS);
	printf("  %-12s %8s  %20s  %20s  %14s\n", "", "pending", cont_name[WHEEL], cont_name[LIBEVENT],
	       "wheel/libevent");
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		if (run_size(sizes[i], &arm, &rearm) < 0)
			return 1;
	printf("  target <= 0.10x libevent at 1e6 pending: arm+cancel %.3f %s, cancel+rearm %.3f %s\n", arm,
	       arm <= 0.10 ? "met" : "MISSED", rearm, rearm <= 0.10 ? "met" : "MISSED");
	return 0;
}
