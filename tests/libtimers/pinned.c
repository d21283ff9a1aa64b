/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Where and in which order callbacks run: a timer armed on CPU n runs its
 * callback on CPU n (sched_getcpu() in the callback), for every CPU the
 * daemon serves, in both flavours; timers armed for the same jiffy on the
 * same CPU run in the order they were armed.
 */
#include <errno.h>
#include <sched.h>
#include <string.h>

#include <clockd/clockd.h>
#include "tests/libtimers/daemon.h"
#include "tests/tap.h"

#define NORDER 200
#define WAIT_NS 10000000000LL

static uint64_t ran;
static int seen_cpu;

static void on_cpu(struct clockd_timer *t, void *arg)
{
	(void)t;
	(void)arg;
	seen_cpu = sched_getcpu();
	__atomic_fetch_add(&ran, 1, __ATOMIC_RELEASE);
}

static void on_cpu_posix(union sigval v)
{
	(void)v;
	seen_cpu = sched_getcpu();
	__atomic_fetch_add(&ran, 1, __ATOMIC_RELEASE);
}

static int order[NORDER];

static void in_order(struct clockd_timer *t, void *arg)
{
	uint64_t n = __atomic_load_n(&ran, __ATOMIC_RELAXED);

	(void)t;
	order[n] = (int)(intptr_t)arg;
	__atomic_store_n(&ran, n + 1, __ATOMIC_RELEASE);
}

static void check_cpu(int cpu)
{
	struct clockd_sigevent sev = { .notify = CLOCKD_SIGEV_THREAD_CPU, .cpu = cpu, .fn = on_cpu_posix };
	struct itimerspec its = { .it_value = { 0, 2000000 } };
	struct clockd_timer t;
	clockd_timer_t pt;
	bool ok;
	int r;

	__atomic_store_n(&ran, 0, __ATOMIC_RELAXED);
	seen_cpu = -1;
	clockd_timer_setup(&t, on_cpu, NULL);
	r = clockd_add_timer_on(&t, clockd_get_jiffies_64() + 2, (unsigned)cpu);
	if (r < 0 && errno == ENXIO) {
		tap_skip("the daemon serves no timers on CPU %d", cpu);
		tap_skip("the daemon serves no timers on CPU %d", cpu);
		return;
	}
	ok = r == 0 && td_wait_u64(&ran, 1, WAIT_NS);
	tap_ok(ok && seen_cpu == cpu, "add_timer_on CPU %d: the callback ran on CPU %d", cpu, seen_cpu);
	__atomic_store_n(&ran, 0, __ATOMIC_RELAXED);
	seen_cpu = -1;
	r = clockd_timer_create(CLOCKD_MONOTONIC, &sev, &pt);
	r = r == 0 ? clockd_timer_settime(pt, 0, &its, NULL) : r;
	ok = r == 0 && td_wait_u64(&ran, 1, WAIT_NS);
	tap_ok(ok && seen_cpu == cpu,
	       "timer_create on CPU %d (CLOCKD_SIGEV_THREAD_CPU): the function ran on CPU %d", cpu, seen_cpu);
	if (r == 0)
		clockd_timer_delete(pt);
}

static void check_order(int cpu)
{
	static struct clockd_timer t[NORDER];
	uint64_t at = clockd_get_jiffies_64() + 20;
	int bad = 0, r = 0;

	__atomic_store_n(&ran, 0, __ATOMIC_RELAXED);
	for (int i = 0; i < NORDER && r == 0; i++) {
		clockd_timer_setup(&t[i], in_order, (void *)(intptr_t)i);
		r = clockd_add_timer_on(&t[i], at, (unsigned)cpu);
	}
	tap_ok(r == 0, "%d timers armed for jiffy %llu on CPU %d", NORDER, (unsigned long long)at, cpu);
	tap_ok(td_wait_u64(&ran, NORDER, WAIT_NS), "all %d ran", NORDER);
	for (int i = 0; i < NORDER; i++)
		bad += order[i] != i;
	tap_ok(bad == 0, "equal deadlines ran in arm order (%d out of place)", bad);
}

int main(void)
{
	uint64_t cpus;
	int n = 0, first = -1;

	td_init();
	td_start(NULL);
	cpus = td_cpus();
	for (int c = 0; c < 64; c++)
		if (cpus >> c & 1) {
			n++;
			if (first < 0)
				first = c;
		}
	tap_plan(2 * n + 3);
	for (int c = 0; c < 64; c++)
		if (cpus >> c & 1)
			check_cpu(c);
	check_order(first);
	return tap_done();
}
