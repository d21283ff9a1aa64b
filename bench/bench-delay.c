/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * clockd_ndelay/udelay accuracy against a running daemon ($CLOCKD_SHM):
 * how much longer than asked each delay is, as CLOCKD_MONOTONIC sees it
 * from just before the call to just after (p50, p99, max over REPS), side
 * by side with the same spin on the kernel's CLOCK_MONOTONIC (the vDSO),
 * and the ratio. The target: ndelay error <= 100 ns at p99 on an
 * unloaded core. Run it pinned (taskset) on a quiet CPU.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <clockd/clockd.h>

#define REPS 100000

static int64_t late[REPS];

static int64_t now_ns(clockid_t id)
{
	struct timespec ts;

	/* A failed read would be garbage in the figures: stop instead. */
	if (clockd_clock_gettime(id, &ts) != 0) {
		fprintf(stderr, "bench-delay: clock %d: %s\n", (int)id, strerror(errno));
		exit(1);
	}
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The obvious delay: spin on the kernel's clock. */
static void kernel_ndelay(unsigned long ns)
{
	int64_t end = now_ns(CLOCK_MONOTONIC) + (int64_t)ns;

	while (now_ns(CLOCK_MONOTONIC) < end)
		;
}

static int cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* Extra ns over @ns of REPS calls of @fn, measured on @clk. */
static void measure(void (*fn)(unsigned long), unsigned long ns, clockid_t clk, int64_t *p50, int64_t *p99,
		    int64_t *max)
{
	for (int i = 0; i < REPS; i++) {
		int64_t t0 = now_ns(clk);

		fn(ns);
		late[i] = now_ns(clk) - t0 - (int64_t)ns;
	}
	qsort(late, REPS, sizeof(late[0]), cmp);
	*p50 = late[REPS / 2];
	*p99 = late[REPS * 99 / 100];
	*max = late[REPS - 1];
}

int main(void)
{
	static const unsigned long ns[] = { 1, 10, 100, 1000, 10000 };
	struct timespec res;

	if (clockd_clock_getres(CLOCKD_MONOTONIC, &res) != 0 || res.tv_sec != 0 || res.tv_nsec > 1000) {
		printf("  no daemon, or CLOCKD_MONOTONIC is not read at counter resolution here: skipped\n");
		return 0;
	}
	printf("  extra ns over the delay asked, %d calls each  p50/p99/max\n", REPS);
	printf("  %8s  %22s  %22s  %s\n", "ns", "clockd_ndelay", "spin on CLOCK_MONOTONIC", "p99 ratio");
	for (unsigned i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
		int64_t a50, a99, amax, b50, b99, bmax;

		measure(clockd_ndelay, ns[i], CLOCKD_MONOTONIC, &a50, &a99, &amax);
		measure(kernel_ndelay, ns[i], CLOCK_MONOTONIC, &b50, &b99, &bmax);
		printf("  %8lu  %6lld/%6lld/%8lld  %6lld/%6lld/%8lld  %.2f\n", ns[i], (long long)a50,
		       (long long)a99, (long long)amax, (long long)b50, (long long)b99, (long long)bmax,
		       b99 > 0 ? (double)a99 / (double)b99 : 0.0);
	}
	return 0;
}
