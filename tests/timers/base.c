/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The per-CPU timer bases (src/clockd/timerbase.h) against a live page: a
 * clockd started here, the bases in this process, and the client's side
 * played on the shared memory (tbclient.h).
 *
 * Environment: BASE_EXPIRIES (default 100000) expiries for the never-early
 * run, BASE_MANY (default 1000000) timers for the arm-and-cancel run (the
 * TSan build runs smaller ones).
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <clockd/clockd.h>
#include "tap.h"
#include "timers/tbclient.h"

#define WAIT_S 20 /* generous deadline for anything we wait for */
#define MAX_TIMERS (1u << 20)
#define RING_SLOTS 256u

static struct timer_bases *tb;
static int ntests;

#define OK(cond, ...) (ntests++, tap_ok((cond), __VA_ARGS__))

static __attribute__((unused)) unsigned env_uint(const char *name, unsigned dflt)
{
	const char *s = getenv(name);

	return s && *s ? (unsigned)strtoul(s, NULL, 10) : dflt;
}

static uint64_t deadline_kns(unsigned s)
{
	return tbc_kns() + (uint64_t)s * 1000000000u;
}

static struct timerrec arm_rec(uint32_t id, uint32_t gen, uint8_t clock, uint16_t flags, uint64_t expires,
			       uint64_t period)
{
	struct timerrec t = { .op = TREC_ARM, .clock = clock, .flags = flags, .timer_id = id, .gen = gen,
			      .expires = expires, .period = period };

	return t;
}

static __attribute__((unused)) struct timerrec cancel_rec(uint32_t id)
{
	struct timerrec t = { .op = TREC_CANCEL, .timer_id = id };

	return t;
}

/* Wait until the client's pending count is @want (stats are updated by the
 * bases at the end of each round). */
static bool wait_pending(struct tbc *t, uint64_t want)
{
	uint64_t end = deadline_kns(WAIT_S * 3);
	struct tb_client_stats st;

	do {
		tb_client_stats(tb, t->c, &st);
		if (st.pending == want)
			return true;
		tbc_sleep_us(1000);
	} while (tbc_kns() < end);
	tap_diag("pending %" PRIu64 ", waited for %" PRIu64, st.pending, want);
	return false;
}

/* Pop from ring pair @k until @want records are in @out (or the deadline). */
static unsigned collect(struct tbc *t, unsigned k, struct timerrec *out, unsigned want)
{
	uint64_t end = deadline_kns(WAIT_S);
	unsigned got = 0;

	while (got < want && tbc_kns() < end) {
		int n = tbc_pop(t, k, out + got, want - got);

		if (n == 0)
			tbc_sleep_us(200);
		got += (unsigned)n;
	}
	return got;
}

static unsigned total_records(struct tbc *t)
{
	unsigned n = 0;

	for (unsigned k = 0; k < t->n; k++) {
		int c = ring_count(&t->deliv[k]);

		n += c > 0 ? (unsigned)c : 0;
	}
	return n;
}

/* ---- pinning ---- */

/* The base thread of @cpu ("clockd-tb/N"): its allowed CPUs are {cpu}. */
static bool thread_pinned(unsigned cpu)
{
	char want[32], path[300], comm[64];
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	bool found = false, pinned = false;

	snprintf(want, sizeof(want), "clockd-tb/%u\n", cpu);
	while (d && (e = readdir(d))) {
		FILE *f;
		cpu_set_t set;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(comm, sizeof(comm), f) && strcmp(comm, want) == 0) {
			found = true;
			pinned = sched_getaffinity((pid_t)atoi(e->d_name), sizeof(set), &set) == 0 &&
				 CPU_COUNT(&set) == 1 && CPU_ISSET(cpu, &set);
		}
		fclose(f);
	}
	if (d)
		closedir(d);
	if (!found)
		tap_diag("no thread named clockd-tb/%u", cpu);
	return found && pinned;
}

/* A jiffies and a ns timer armed on ring pair k fire in k's delivery ring
 * (only base k produces it), and base k's thread is pinned to its CPU. */
static void test_pinned(void)
{
	struct tbc t;
	struct timerrec a = arm_rec(1, 11, CTL_CLOCK_JIFFIES, 0, 2, 0);
	struct timerrec b = arm_rec(2, 12, CTL_CLOCK_MONOTONIC, 0, 1000000, 0);
	struct timerrec got[2];

	if (!tbc_open(&t, tb))
		tap_bail("tb_client_new: %s", strerror(errno));
	for (unsigned k = 0; k < t.n; k++) {
		struct tb_cpu_stats cs;
		unsigned n;

		timer_bases_cpu_stats(tb, k, &cs);
		tbc_push(&t, k, &a);
		tbc_push(&t, k, &b);
		n = collect(&t, k, got, 2);
		OK(n == 2 && got[0].op == TREC_FIRE && got[1].op == TREC_FIRE &&
			   got[0].timer_id + got[1].timer_id == 3 && total_records(&t) == 0,
		   "CPU %u: both timers fired in its delivery ring (%u records), none elsewhere", t.cpu[k], n);
		OK(cs.cpu == t.cpu[k] && thread_pinned(t.cpu[k]), "CPU %u: the base thread runs pinned to it",
		   t.cpu[k]);
	}
	tbc_close(&t, tb);
}

/* ---- the socket path ---- */

static void test_socket_path(void)
{
	struct tbc t;
	struct ctl_arm arm = { .timer_id = 5, .clock = CTL_CLOCK_MONOTONIC, .expires = 1000000 };
	struct ctl_arm far = { .timer_id = 6, .clock = CTL_CLOCK_JIFFIES, .expires = 1000000 };
	struct timerrec got;
	int r;

	if (!tbc_open(&t, tb))
		tap_bail("tb_client_new: %s", strerror(errno));
	arm.cpu = far.cpu = t.cpu[t.n - 1];
	r = tb_client_arm(tb, t.c, &arm, 9);
	OK(r == 0 && collect(&t, t.n - 1, &got, 1) == 1 && got.op == TREC_FIRE && got.timer_id == 5 &&
		   got.gen == 9,
	   "tb_client_arm: the FIRE arrives with the generation given (r %d)", r);
	r = tb_client_arm(tb, t.c, &far, 10);
	OK(r == 0 && wait_pending(&t, 1), "tb_client_arm: a far timer is pending");
	r = tb_client_cancel(tb, t.c, 6);
	OK(r == 0 && wait_pending(&t, 0) && total_records(&t) == 0,
	   "tb_client_cancel: nothing pending, nothing delivered");
	arm.cpu = TIMER_SHM_MAX_CPUS;
	OK(tb_client_arm(tb, t.c, &arm, 1) == -ENXIO, "tb_client_arm on a CPU without a base: -ENXIO");
	tbc_close(&t, tb);
}

int main(void)
{
	struct tb_params p = { .priority = 0, .hz = 1000, .ring_slots = RING_SLOTS, .max_timers = MAX_TIMERS };
	cpu_set_t set;

	tbc_daemon_start();
	if (sched_getaffinity(0, sizeof(set), &set) < 0)
		tap_bail("sched_getaffinity: %s", strerror(errno));
	for (unsigned cpu = 0; cpu < TIMER_SHM_MAX_CPUS; cpu++)
		if (CPU_ISSET(cpu, &set))
			p.cpu_mask |= 1ull << cpu;
	tb = tbc_bases_start(&p);
	test_pinned();
	test_socket_path();
	tbc_bases_stop(tb);
	tap_plan(ntests);
	return tap_done();
}
