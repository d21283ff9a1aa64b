/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Client timers through libclockd against a running daemon ($CLOCKD_SHM,
 * $CLOCKD_SOCKET):
 *  - delivery lateness of a daemon-delivered 1 ms periodic POSIX timer
 *    (CLOCKD_SIGEV_THREAD_CPU) against a timerfd of the same period read by
 *    a thread of the same class pinned to the same CPU: p50, p99, p99.9,
 *    max and the ratios (targets p50 <= 1.2x, p99 <= 1.5x);
 *  - arm+cancel per second through the public API (clockd_mod_timer +
 *    clockd_del_timer on timers of the other CPU), target >= 1M/s.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <clockd/clockd.h>

#define N 5000
#define PERIOD_NS 1000000LL
#define NS 1000000000LL
#define OPS 2000000
#define SET 1024

static int64_t late[N], direct_late[N];
static int nlate;
static clockd_timer_t ptimer;
static int64_t first;

static int64_t clk(clockid_t c)
{
	struct timespec ts;

	/* A failed read would be garbage in the figures: stop instead. */
	if ((c == CLOCK_MONOTONIC ? clock_gettime(c, &ts) : clockd_clock_gettime(c, &ts)) != 0) {
		fprintf(stderr, "bench-timers: clock %d: %s\n", (int)c, strerror(errno));
		exit(1);
	}
	return (int64_t)ts.tv_sec * NS + ts.tv_nsec;
}

static int64_t seen_expiries;

static void on_fire(union sigval v)
{
	int64_t now = clk(CLOCKD_MONOTONIC);

	(void)v;
	seen_expiries += 1 + clockd_timer_getoverrun(ptimer);
	if (nlate < N)
		late[nlate++] = now - (first + (seen_expiries - 1) * PERIOD_NS);
}

static int cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

static int64_t pct(const int64_t *v, double p)
{
	return v[(int)(p * (N - 1))];
}

static void daemon_latency(int cpu)
{
	struct clockd_sigevent sev = { .notify = CLOCKD_SIGEV_THREAD_CPU, .cpu = cpu, .fn = on_fire };
	struct itimerspec its = { .it_interval = { 0, PERIOD_NS } };

	if (clockd_timer_create(CLOCKD_MONOTONIC, &sev, &ptimer) < 0) {
		perror("clockd_timer_create");
		exit(1);
	}
	first = clk(CLOCKD_MONOTONIC) + 10 * PERIOD_NS;
	its.it_value.tv_sec = first / NS;
	its.it_value.tv_nsec = first % NS;
	if (clockd_timer_settime(ptimer, TIMER_ABSTIME, &its, NULL) < 0) {
		perror("clockd_timer_settime");
		exit(1);
	}
	while (__atomic_load_n(&nlate, __ATOMIC_RELAXED) < N)
		usleep(10000);
	clockd_timer_delete(ptimer);
}

static void *direct_thread(void *p)
{
	struct itimerspec its = { .it_interval = { 0, PERIOD_NS } };
	int fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	int64_t start, n = 0;
	uint64_t count;

	(void)p;
	start = clk(CLOCK_MONOTONIC) + 10 * PERIOD_NS;
	its.it_value.tv_sec = start / NS;
	its.it_value.tv_nsec = start % NS;
	timerfd_settime(fd, TFD_TIMER_ABSTIME, &its, NULL);
	for (int i = 0; i < N; i++) {
		if (read(fd, &count, sizeof(count)) != sizeof(count))
			break;
		n += (int64_t)count;
		direct_late[i] = clk(CLOCK_MONOTONIC) - (start + (n - 1) * PERIOD_NS);
	}
	close(fd);
	return NULL;
}

static void direct_latency(int cpu)
{
	pthread_attr_t attr;
	cpu_set_t set;
	pthread_t th;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_attr_init(&attr);
	pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	pthread_create(&th, &attr, direct_thread, NULL);
	pthread_join(th, NULL);
	pthread_attr_destroy(&attr);
}

static void nothing(struct clockd_timer *t, void *arg)
{
	(void)t;
	(void)arg;
}

static void arm_cancel(int cpu)
{
	static struct clockd_timer t[SET];
	uint64_t far = clockd_get_jiffies_64() + 1000000;
	int64_t t0, t1;
	int fails = 0;

	for (int i = 0; i < SET; i++) {
		clockd_timer_setup(&t[i], nothing, NULL);
		if (clockd_add_timer_on(&t[i], far, (unsigned)cpu) < 0 || clockd_del_timer(&t[i]) != 1)
			fails++;
	}
	t0 = clk(CLOCK_MONOTONIC);
	for (int i = 0; i < OPS; i++) {
		struct clockd_timer *x = &t[i % SET];

		fails += clockd_mod_timer(x, far + (uint64_t)(i & 63)) < 0;
		fails += clockd_del_timer(x) != 1;
	}
	t1 = clk(CLOCK_MONOTONIC);
	printf("  arm+cancel via the API (mod_timer + del_timer, CPU %d): %.2f M/s (%.0f ns per pair)%s\n", cpu,
	       OPS / ((t1 - t0) / 1e9) / 1e6, (double)(t1 - t0) / OPS, fails ? " (FAILURES)" : "");
	printf("  target >= 1M/s: %s\n", OPS / ((t1 - t0) / 1e9) >= 1e6 ? "met" : "MISSED");
}

int main(void)
{
	int ncpu = sched_getcpu() >= 0 ? 1 : 0, cpu = 0, other = 0;
	cpu_set_t set;

	sched_getaffinity(0, sizeof(set), &set);
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set)) {
			other = c;
			ncpu++;
		}
	(void)ncpu;
	printf("== client timers: delivery lateness, %d expiries of a 1 ms periodic timer on CPU %d\n", N, cpu);
	daemon_latency(cpu);
	direct_latency(cpu);
	qsort(late, N, sizeof(late[0]), cmp);
	qsort(direct_late, N, sizeof(direct_late[0]), cmp);
	printf("  %-34s %9s %9s %9s %9s (us)\n", "", "p50", "p99", "p99.9", "max");
	printf("  %-34s %9.1f %9.1f %9.1f %9.1f\n", "clockd (THREAD_CPU, daemon-expired)", pct(late, .5) / 1e3,
	       pct(late, .99) / 1e3, pct(late, .999) / 1e3, late[N - 1] / 1e3);
	printf("  %-34s %9.1f %9.1f %9.1f %9.1f\n", "direct timerfd, same CPU and class", pct(direct_late, .5) / 1e3,
	       pct(direct_late, .99) / 1e3, pct(direct_late, .999) / 1e3, direct_late[N - 1] / 1e3);
	printf("  ratio p50 %.2f (target <= 1.2), p99 %.2f (target <= 1.5)\n",
	       (double)pct(late, .5) / (double)pct(direct_late, .5), (double)pct(late, .99) / (double)pct(direct_late, .99));
	printf("== client timers: arm+cancel throughput\n");
	arm_cancel(other);
	return 0;
}
