/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Client timers through libclockd against a running daemon ($CLOCKD_SHM,
 * $CLOCKD_SOCKET):
 *  - delivery lateness of a daemon-delivered periodic POSIX timer (1 ms)
 *    (CLOCKD_SIGEV_THREAD_CPU) against a timerfd of the same period read by
 *    a thread of the same class (the caller's: run it under chrt) pinned to
 *    the same CPU. The two are measured side by side: each repetition is
 *    short phases of each in alternating order, so both see the same
 *    machine; per repetition p50 and p99 of each side and their ratios,
 *    then the pooled figures;
 *  - arm+cancel per second through the public API (clockd_mod_timer +
 *    clockd_del_timer on timers of the other CPU), once per repetition.
 *
 * usage: bench-timers [-r REPS] [-n EXPIRIES] [-c PHASES] [-p PERIOD_US] [-R] [-l] [-P P50] [-Q P99]
 *                     [-T MOPS]
 *   -r  repetitions (5), -n  expiries a side per repetition (2000), in -c
 *   phases a side (5), -p  the timers' period in us (1000), -R  the timers
 *   on CLOCKD_REALTIME and CLOCK_REALTIME (each side's lateness on its own
 *   clock) instead of the monotonic clocks, -l  latency only;
 *   -P, -Q  the p50 and p99 ratio targets (1.1, 1.3), -T  the arm+cancel
 *   target in M pairs/s (1.5). The exit status is 0 whether or not they are
 *   met: the figures are the output.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <clockd/clockd.h>

#define NS 1000000000LL
#define OPS 1000000
#define SET 1024
#define MAX_REPS 50
#define MAX_N 100000

static int nexp = 2000, chunks = 5;
static int64_t period_ns; /* -p, in ns */
/* -R: the clocks the two sides' timers run on. */
static clockid_t clockd_id = CLOCKD_MONOTONIC, kernel_id = CLOCK_MONOTONIC;
static int64_t *late, *direct_late, *pool_late, *pool_direct;
static int nlate, late_end; /* the daemon phase fills late[nlate .. late_end) */
static clockd_timer_t ptimer;
static int64_t first, seen_expiries;
/* This process's CPU time in each side's phases, ns. */
static int64_t cpu_daemon, cpu_direct;

static int64_t clk(clockid_t c)
{
	struct timespec ts;

	/* A failed read would be garbage in the figures: stop instead. */
	if ((c == CLOCK_MONOTONIC || c == CLOCK_REALTIME || c == CLOCK_PROCESS_CPUTIME_ID ? clock_gettime(c, &ts) :
	     clockd_clock_gettime(c, &ts)) != 0) {
		fprintf(stderr, "bench-timers: clock %d: %s\n", (int)c, strerror(errno));
		exit(1);
	}
	return (int64_t)ts.tv_sec * NS + ts.tv_nsec;
}

static void on_fire(union sigval v)
{
	int64_t now = clk(clockd_id);
	int n = __atomic_load_n(&nlate, __ATOMIC_RELAXED);

	(void)v;
	seen_expiries += 1 + clockd_timer_getoverrun(ptimer);
	if (n < late_end) {
		late[n] = now - (first + (seen_expiries - 1) * period_ns);
		__atomic_store_n(&nlate, n + 1, __ATOMIC_RELEASE);
	}
}

static int cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* Percentile @p of the sorted @v of @n. */
static int64_t pct(const int64_t *v, int n, double p)
{
	return v[(int)(p * (n - 1))];
}

static void sleep_until(int64_t at)
{
	struct timespec ts = { .tv_sec = at / NS, .tv_nsec = at % NS };

	while (clockd_clock_nanosleep(CLOCKD_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/* @count expiries of each side into late[@from ...], direct_late[@from ...]. */
static void daemon_phase(int cpu, int from, int count)
{
	struct clockd_sigevent sev = { .notify = CLOCKD_SIGEV_THREAD_CPU, .cpu = cpu, .fn = on_fire };
	struct itimerspec its = { .it_interval = { period_ns / NS, period_ns % NS } };

	int64_t c0 = clk(CLOCK_PROCESS_CPUTIME_ID);

	nlate = from;
	late_end = from + count;
	seen_expiries = 0;
	if (clockd_timer_create(clockd_id, &sev, &ptimer) < 0) {
		perror("clockd_timer_create");
		exit(1);
	}
	first = clk(clockd_id) + 10 * period_ns;
	its.it_value.tv_sec = first / NS;
	its.it_value.tv_nsec = first % NS;
	if (clockd_timer_settime(ptimer, TIMER_ABSTIME, &its, NULL) < 0) {
		perror("clockd_timer_settime");
		exit(1);
	}
	/* Asleep for the phase, then polling: the process's CPU time is the
	 * delivery's, not this thread's (a poll every period at 10 ms). It
	 * wakes half a period after the last expiry, not at one. */
	sleep_until(first - clk(clockd_id) + clk(CLOCKD_MONOTONIC) + count * period_ns - period_ns / 2);
	while (__atomic_load_n(&nlate, __ATOMIC_ACQUIRE) < late_end)
		usleep(10000);
	clockd_timer_delete(ptimer);
	cpu_daemon += clk(CLOCK_PROCESS_CPUTIME_ID) - c0;
}

static void *direct_thread(void *p)
{
	struct itimerspec its = { .it_interval = { period_ns / NS, period_ns % NS } };
	int fd = timerfd_create(kernel_id, TFD_CLOEXEC);
	const int *range = p;
	int64_t start, n = 0;
	uint64_t count;

	start = clk(kernel_id) + 10 * period_ns;
	its.it_value.tv_sec = start / NS;
	its.it_value.tv_nsec = start % NS;
	if (fd < 0 || timerfd_settime(fd, TFD_TIMER_ABSTIME, &its, NULL) < 0) {
		perror("bench-timers: timerfd");
		exit(1);
	}
	for (int i = range[0]; i < range[0] + range[1]; i++) {
		if (read(fd, &count, sizeof(count)) != sizeof(count)) {
			perror("bench-timers: timerfd read");
			exit(1);
		}
		n += (int64_t)count;
		direct_late[i] = clk(kernel_id) - (start + (n - 1) * period_ns);
	}
	close(fd);
	return NULL;
}

/* The timerfd on a thread pinned to @cpu; created with the default
 * attributes it inherits our scheduling class, as the delivery thread does. */
static void direct_phase(int cpu, int from, int count)
{
	int range[2] = { from, count };
	int64_t c0 = clk(CLOCK_PROCESS_CPUTIME_ID);
	pthread_attr_t attr;
	cpu_set_t set;
	pthread_t th;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_attr_init(&attr);
	pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	if (pthread_create(&th, &attr, direct_thread, range) != 0) {
		fprintf(stderr, "bench-timers: pthread_create failed\n");
		exit(1);
	}
	pthread_join(th, NULL);
	pthread_attr_destroy(&attr);
	cpu_direct += clk(CLOCK_PROCESS_CPUTIME_ID) - c0;
}

static void nothing(struct clockd_timer *t, void *arg)
{
	(void)t;
	(void)arg;
}

/* M arm+cancel pairs per second. */
static double arm_cancel(int cpu, int *fails)
{
	static struct clockd_timer t[SET];
	static bool set_up;
	uint64_t far = clockd_get_jiffies_64() + 1000000;
	int64_t t0, t1;

	for (int i = 0; i < SET && !set_up; i++) {
		clockd_timer_setup(&t[i], nothing, NULL);
		if (clockd_add_timer_on(&t[i], far, (unsigned)cpu) < 0 || clockd_del_timer(&t[i]) != 1)
			++*fails;
	}
	set_up = true;
	t0 = clk(CLOCK_MONOTONIC);
	for (int i = 0; i < OPS; i++) {
		struct clockd_timer *x = &t[i % SET];

		*fails += clockd_mod_timer(x, far + (uint64_t)(i & 63)) < 0;
		*fails += clockd_del_timer(x) != 1;
	}
	t1 = clk(CLOCK_MONOTONIC);
	return OPS / ((t1 - t0) / 1e9) / 1e6;
}

static const char *verdict(bool met)
{
	return met ? "met" : "MISSED";
}

static void latency(int reps, int cpu, double t50, double t99)
{
	double r50[MAX_REPS], r99[MAX_REPS], w50 = 0, w99 = 0;
	int np = 0, met = 0;

	printf("== client timers: delivery lateness (us) of a %g ms periodic %s timer on CPU %d, clockd "
	       "(THREAD_CPU) vs the client's own timerfd, %d expiries each, %d repetitions of %d phases a side, "
	       "alternating\n", (double)period_ns / 1e6, clockd_id == CLOCKD_REALTIME ? "realtime" : "monotonic",
	       cpu, nexp, reps, chunks);
	printf("  %-4s %9s %9s %9s %9s %8s %8s\n", "rep", "clockd50", "tfd50", "clockd99", "tfd99", "p50x",
	       "p99x");
	for (int r = 0; r < reps; r++) {
		/* Short phases in alternating order: neither side always runs
		 * second, and a burst of load from elsewhere falls on both. */
		for (int k = 0, from = 0; k < chunks; k++, from += nexp / chunks) {
			if ((r + k) % 2) {
				direct_phase(cpu, from, nexp / chunks);
				daemon_phase(cpu, from, nexp / chunks);
			} else {
				daemon_phase(cpu, from, nexp / chunks);
				direct_phase(cpu, from, nexp / chunks);
			}
		}
		memcpy(pool_late + np, late, (size_t)nexp * sizeof(*late));
		memcpy(pool_direct + np, direct_late, (size_t)nexp * sizeof(*late));
		np += nexp;
		qsort(late, (size_t)nexp, sizeof(late[0]), cmp);
		qsort(direct_late, (size_t)nexp, sizeof(direct_late[0]), cmp);
		r50[r] = (double)pct(late, nexp, .5) / (double)pct(direct_late, nexp, .5);
		r99[r] = (double)pct(late, nexp, .99) / (double)pct(direct_late, nexp, .99);
		w50 = r50[r] > w50 ? r50[r] : w50;
		w99 = r99[r] > w99 ? r99[r] : w99;
		met += r50[r] <= t50 && r99[r] <= t99;
		printf("  %-4d %9.1f %9.1f %9.1f %9.1f %8.2f %8.2f\n", r + 1, pct(late, nexp, .5) / 1e3,
		       pct(direct_late, nexp, .5) / 1e3, pct(late, nexp, .99) / 1e3,
		       pct(direct_late, nexp, .99) / 1e3, r50[r], r99[r]);
	}
	qsort(pool_late, (size_t)np, sizeof(*pool_late), cmp);
	qsort(pool_direct, (size_t)np, sizeof(*pool_direct), cmp);
	printf("  all  %9.1f %9.1f %9.1f %9.1f %8.2f %8.2f  (p99.9 %.1f vs %.1f, max %.1f vs %.1f)\n",
	       pct(pool_late, np, .5) / 1e3, pct(pool_direct, np, .5) / 1e3, pct(pool_late, np, .99) / 1e3,
	       pct(pool_direct, np, .99) / 1e3, (double)pct(pool_late, np, .5) / (double)pct(pool_direct, np, .5),
	       (double)pct(pool_late, np, .99) / (double)pct(pool_direct, np, .99), pct(pool_late, np, .999) / 1e3,
	       pct(pool_direct, np, .999) / 1e3, pool_late[np - 1] / 1e3, pool_direct[np - 1] / 1e3);
	printf("  client CPU per expiry: %.1f us (clockd, the delivery thread's wake-up and its wait for the "
	       "expiry) vs %.1f us (timerfd)\n", cpu_daemon / 1e3 / np, cpu_direct / 1e3 / np);
	printf("  worst repetition p50 %.2fx p99 %.2fx; target p50 <= %.2fx, p99 <= %.2fx: %s (met in %d of %d)\n", w50,
	       w99, t50, t99, verdict(met == reps), met, reps);
}

int main(int argc, char **argv)
{
	double t50 = 1.1, t99 = 1.3, tops = 1.5, mops, worst = 1e30;
	int reps = 5, cpu = 0, other = 0, fails = 0, opt;
	bool latency_only = false;
	long long period_us = 1000;
	cpu_set_t set;

	while ((opt = getopt(argc, argv, "r:n:c:p:RlP:Q:T:")) != -1) {
		switch (opt) {
		case 'r': reps = atoi(optarg); break;
		case 'n': nexp = atoi(optarg); break;
		case 'c': chunks = atoi(optarg); break;
		case 'p': period_us = atoll(optarg); break;
		case 'R': clockd_id = CLOCKD_REALTIME; kernel_id = CLOCK_REALTIME; break;
		case 'l': latency_only = true; break;
		case 'P': t50 = atof(optarg); break;
		case 'Q': t99 = atof(optarg); break;
		case 'T': tops = atof(optarg); break;
		default:
			fprintf(stderr, "usage: bench-timers [-r REPS] [-n EXPIRIES] [-c PHASES] [-p PERIOD_US] [-R] [-l] [-P P50] [-Q P99] "
				"[-T MOPS]\n");
			return 2;
		}
	}
	if (reps < 1 || reps > MAX_REPS || nexp < 100 || nexp > MAX_N || chunks < 1 || chunks > nexp / 100 ||
	    period_us < 100 || period_us > 1000000) {
		fprintf(stderr, "bench-timers: 1 <= REPS <= %d, 100 <= EXPIRIES <= %d, 1 <= PHASES <= EXPIRIES / 100, "
			"100 <= PERIOD_US <= 1000000\n", MAX_REPS, MAX_N);
		return 2;
	}
	period_ns = period_us * 1000;
	nexp = nexp / chunks * chunks;
	late = calloc((size_t)nexp, sizeof(*late));
	direct_late = calloc((size_t)nexp, sizeof(*late));
	pool_late = calloc((size_t)nexp * (size_t)reps, sizeof(*late));
	pool_direct = calloc((size_t)nexp * (size_t)reps, sizeof(*late));
	if (!late || !direct_late || !pool_late || !pool_direct) {
		perror("bench-timers");
		return 1;
	}
	sched_getaffinity(0, sizeof(set), &set);
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set))
			other = c;
	latency(reps, cpu, t50, t99);
	if (latency_only)
		return 0;
	printf("== client timers: arm+cancel via the API (mod_timer + del_timer, CPU %d), %d pairs, %d repetitions\n",
	       other, OPS, reps);
	for (int r = 0; r < reps; r++) {
		mops = arm_cancel(other, &fails);
		worst = mops < worst ? mops : worst;
		printf("  %d: %.2f M/s (%.0f ns per pair)\n", r + 1, mops, 1e3 / mops);
	}
	printf("  slowest %.2f M/s%s; target >= %.2f M/s: %s\n", worst, fails ? " (FAILURES)" : "", tops,
	       verdict(worst >= tops && !fails));
	return 0;
}
