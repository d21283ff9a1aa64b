/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Never early: at least 1e5 expiries of mixed timers on every served CPU,
 * each checked in its callback against the clock it was armed on:
 * jiffies timers (add_timer_on, re-armed from the callback) against
 * clockd_get_jiffies_64(); ns timers (timer_create on CLOCKD_MONOTONIC and
 * CLOCKD_REALTIME, absolute and relative, one-shot re-armed from the
 * callback and periodic) against clockd_clock_gettime(). A periodic
 * timer's n-th expiry is first + period * (n - 1), n counting overruns.
 * A clock read that fails is counted as such, never as an early expiry
 * (its timespec would be garbage); every read must succeed too.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <clockd/clockd.h>
#include "tests/libtimers/daemon.h"
#include "tests/tap.h"

#define WANT 100000
#define RUN_NS 120000000000LL
#define NS 1000000000LL

static uint64_t total, early, rearm_fail, read_fail;
static int read_errno;

#define UNKNOWN INT64_MIN /* pt.expect after a failed read */

struct jt {
	struct clockd_timer t;
	unsigned cpu;
	unsigned step;
};

struct pt {
	clockd_timer_t id;
	clockid_t clock;
	int abs;
	int64_t period;   /* 0: one-shot, re-armed */
	int64_t expect;   /* next expiry (periodic: of count + 1) */
	int64_t delay;
};

/* The clock in ns, or UNKNOWN (counted) if the read failed. */
static int64_t read_ns(clockid_t c)
{
	struct timespec ts;

	if (clockd_clock_gettime(c, &ts) < 0) {
		read_errno = errno;
		__atomic_fetch_add(&read_fail, 1, __ATOMIC_RELAXED);
		return UNKNOWN;
	}
	return (int64_t)ts.tv_sec * NS + ts.tv_nsec;
}

static struct timespec ts_of(int64_t ns)
{
	struct timespec ts = { ns / NS, ns % NS };

	return ts;
}

static void count(bool is_early)
{
	__atomic_fetch_add(&total, 1, __ATOMIC_RELAXED);
	if (is_early)
		__atomic_fetch_add(&early, 1, __ATOMIC_RELAXED);
}

static void jfire(struct clockd_timer *t, void *arg)
{
	struct jt *j = arg;

	count(clockd_get_jiffies_64() < t->expires);
	j->step = j->step % 3 + 1;
	if (clockd_add_timer_on(t, clockd_get_jiffies_64() + j->step, j->cpu) < 0)
		__atomic_fetch_add(&rearm_fail, 1, __ATOMIC_RELAXED);
}

/* Arm @p; with the clock unreadable, relative and unchecked. */
static int parm(struct pt *p)
{
	struct itimerspec its = { .it_interval = ts_of(p->period) };
	int64_t now = read_ns(p->clock);
	bool abs = p->abs && now != UNKNOWN;

	p->expect = now == UNKNOWN ? UNKNOWN : now + p->delay;
	its.it_value = ts_of(abs ? p->expect : p->delay);
	return clockd_timer_settime(p->id, abs ? TIMER_ABSTIME : 0, &its, NULL);
}

static void pfire(union sigval v)
{
	struct pt *p = v.sival_ptr;
	int64_t now = read_ns(p->clock);

	if (p->period) {
		if (p->expect == UNKNOWN)
			return; /* armed when the clock could not be read */
		p->expect += p->period * clockd_timer_getoverrun(p->id);
		count(now != UNKNOWN && now < p->expect);
		p->expect += p->period;
		return;
	}
	count(now != UNKNOWN && p->expect != UNKNOWN && now < p->expect);
	if (parm(p) < 0)
		__atomic_fetch_add(&rearm_fail, 1, __ATOMIC_RELAXED);
}

/* The ns timers of one CPU: (clock, abs, period, delay). */
static const struct pt kinds[] = {
	{ .clock = CLOCKD_MONOTONIC, .abs = 0, .period = 200000, .delay = 1000000 },
	{ .clock = CLOCKD_MONOTONIC, .abs = 1, .period = 330000, .delay = 1500000 },
	{ .clock = CLOCKD_REALTIME, .abs = 1, .period = 270000, .delay = 2000000 },
	{ .clock = CLOCKD_REALTIME, .abs = 0, .period = 0, .delay = 150000 },
	{ .clock = CLOCKD_MONOTONIC, .abs = 1, .period = 0, .delay = 120000 },
	{ .clock = CLOCKD_MONOTONIC, .abs = 0, .period = 0, .delay = 90000 },
};
#define NKINDS (sizeof(kinds) / sizeof(kinds[0]))
#define NJ 4

static struct jt jts[64][NJ];
static struct pt pts[64][NKINDS];

static int arm_cpu(int cpu)
{
	for (unsigned i = 0; i < NJ; i++) {
		struct jt *j = &jts[cpu][i];

		j->cpu = (unsigned)cpu;
		j->step = i % 3 + 1;
		clockd_timer_setup(&j->t, jfire, j);
		if (clockd_add_timer_on(&j->t, clockd_get_jiffies_64() + j->step, j->cpu) < 0)
			return -1;
	}
	for (unsigned i = 0; i < NKINDS; i++) {
		struct pt *p = &pts[cpu][i];
		struct clockd_sigevent sev = { .notify = CLOCKD_SIGEV_THREAD_CPU, .cpu = cpu, .fn = pfire,
					       .value.sival_ptr = p };

		*p = kinds[i];
		if (clockd_timer_create(p->clock, &sev, &p->id) < 0 || parm(p) < 0)
			return -1;
	}
	return 0;
}

static void stop_cpu(int cpu)
{
	for (unsigned i = 0; i < NJ; i++)
		clockd_del_timer_sync(&jts[cpu][i].t);
	for (unsigned i = 0; i < NKINDS; i++)
		clockd_timer_delete(pts[cpu][i].id);
}

int main(void)
{
	static const char *const opts[] = { "hz=1000", NULL };
	uint64_t cpus;
	int armed = 0, failed = 0;
	bool ok;

	td_init();
	td_start(opts);
	tap_plan(5);
	cpus = td_cpus();
	for (int c = 0; c < 64; c++) {
		if (!(cpus >> c & 1))
			continue;
		if (arm_cpu(c) == 0)
			armed++;
		else if (errno != ENXIO)
			failed++;
	}
	tap_ok(armed > 0 && failed == 0, "%zu ns and %d jiffies timers armed on each of %d CPUs (%d failed)",
	       NKINDS, NJ, armed, failed);
	ok = td_wait_u64(&total, WANT, RUN_NS);
	tap_ok(ok, "%llu expiries", (unsigned long long)total);
	for (int c = 0; c < 64; c++)
		if (cpus >> c & 1)
			stop_cpu(c);
	tap_ok(early == 0, "%llu early out of %llu", (unsigned long long)early, (unsigned long long)total);
	tap_ok(rearm_fail == 0, "every re-arm from a callback succeeded (%llu failed)",
	       (unsigned long long)rearm_fail);
	tap_ok(read_fail == 0, "every clock read succeeded (%llu failed%s%s)", (unsigned long long)read_fail,
	       read_fail ? ": " : "", read_fail ? strerror(read_errno) : "");
	return tap_done();
}
