/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Read-path benchmark: ns per call of libclockd's reads and the kernel's
 * vDSO equivalents, side by side in one process. Rounds are interleaved
 * (A B C ... A B C ...), so a noisy neighbour hurts every contender alike.
 * Noise only ever adds time, so the ratios compare each contender's best
 * round (its intrinsic cost); the medians are printed beside them.
 *
 * Needs a live daemon: $CLOCKD_SHM names its page (bench/run.sh starts one).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <clockd/clockd.h>
#include "shared/tsc.h"

#define CALLS_PER_ROUND 1000000
#define ROUNDS 21

/* Results are summed in a register and published once per round, so the
 * harness adds no memory dependency between calls. */
static volatile uint64_t sink;

typedef void (*bench_fn)(void);

/* One loop per contender: CALLS_PER_ROUND calls of EXPR, summed. */
#define BENCH(name, expr)                                                      \
	static void name(void)                                                 \
	{                                                                      \
		struct timespec ts;                                            \
		uint64_t acc = 0;                                              \
		for (int i = 0; i < CALLS_PER_ROUND; i++)                      \
			acc += (uint64_t)(expr);                               \
		(void)ts;                                                      \
		sink = acc;                                                    \
	}

BENCH(b_clockd_mono, (clockd_clock_gettime(CLOCKD_MONOTONIC, &ts), ts.tv_nsec))
BENCH(b_vdso_mono, (clock_gettime(CLOCK_MONOTONIC, &ts), ts.tv_nsec))
BENCH(b_clockd_real, (clockd_clock_gettime(CLOCKD_REALTIME, &ts), ts.tv_nsec))
BENCH(b_vdso_real, (clock_gettime(CLOCK_REALTIME, &ts), ts.tv_nsec))
BENCH(b_rdtsc, rdtsc_ordered())
BENCH(b_clockd_mono_coarse, (clockd_clock_gettime(CLOCKD_MONOTONIC_COARSE, &ts), ts.tv_nsec))
BENCH(b_vdso_mono_coarse, (clock_gettime(CLOCK_MONOTONIC_COARSE, &ts), ts.tv_nsec))
BENCH(b_clockd_real_coarse, (clockd_clock_gettime(CLOCKD_REALTIME_COARSE, &ts), ts.tv_nsec))
BENCH(b_vdso_real_coarse, (clock_gettime(CLOCK_REALTIME_COARSE, &ts), ts.tv_nsec))
BENCH(b_jiffies, clockd_get_jiffies_64())
/* The same reads through the library's function, as before 0.4 and with
 * CLOCKD_NO_INLINE (the parentheses keep the inline macro out). */
BENCH(b_call_mono_coarse, ((clockd_clock_gettime)(CLOCKD_MONOTONIC_COARSE, &ts), ts.tv_nsec))
BENCH(b_call_jiffies, (clockd_get_jiffies_64)())
BENCH(b_call_mono, ((clockd_clock_gettime)(CLOCKD_MONOTONIC, &ts), ts.tv_nsec))
/* What extrapolating a coarse read would cost at least: a counter read
 * with no ordering (the cheapest way to know that time has passed). */
BENCH(b_rdtsc_bare, __builtin_ia32_rdtsc())

static const struct {
	const char *name;
	bench_fn fn;
} benches[] = {
	{ "clockd_clock_gettime(CLOCKD_MONOTONIC)", b_clockd_mono },
	{ "clock_gettime(CLOCK_MONOTONIC) [vDSO]", b_vdso_mono },
	{ "clockd_clock_gettime(CLOCKD_REALTIME)", b_clockd_real },
	{ "clock_gettime(CLOCK_REALTIME) [vDSO]", b_vdso_real },
	{ "lfence;rdtsc", b_rdtsc },
	{ "clockd_clock_gettime(CLOCKD_MONOTONIC_COARSE)", b_clockd_mono_coarse },
	{ "clock_gettime(CLOCK_MONOTONIC_COARSE) [vDSO]", b_vdso_mono_coarse },
	{ "clockd_clock_gettime(CLOCKD_REALTIME_COARSE)", b_clockd_real_coarse },
	{ "clock_gettime(CLOCK_REALTIME_COARSE) [vDSO]", b_vdso_real_coarse },
	{ "clockd_get_jiffies_64()", b_jiffies },
	{ "(clockd_clock_gettime)(MONOTONIC_COARSE) [call]", b_call_mono_coarse },
	{ "(clockd_get_jiffies_64)() [call]", b_call_jiffies },
	{ "rdtsc, no fence", b_rdtsc_bare },
	{ "(clockd_clock_gettime)(MONOTONIC) [call]", b_call_mono },
};
#define NBENCH (sizeof(benches) / sizeof(benches[0]))

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void ratio(const char *what, const double *best, const double *med, size_t a, size_t b,
		  double target)
{
	double r = best[a] / best[b];

	printf("  %-56s %6.3f (%5.3f)  target <= %.2f: %s\n", what, r, med[a] / med[b], target,
	       r <= target ? "met" : "MISSED");
}

int main(void)
{
	static double ns[NBENCH][ROUNDS];
	double med[NBENCH], best[NBENCH];
	struct timespec ts;

	if (clockd_clock_gettime(CLOCKD_MONOTONIC, &ts) != 0) {
		fprintf(stderr, "bench-read: no live clockd page (%s)\n", strerror(errno));
		return 1;
	}
	for (size_t b = 0; b < NBENCH; b++)
		benches[b].fn(); /* warm up */
	for (int r = 0; r < ROUNDS; r++) {
		for (size_t b = 0; b < NBENCH; b++) {
			double t0 = now_ns();

			benches[b].fn();
			ns[b][r] = (now_ns() - t0) / CALLS_PER_ROUND;
		}
	}
	printf("ns per call over %d interleaved rounds of %d calls:\n", ROUNDS, CALLS_PER_ROUND);
	printf("  %-48s %8s %8s %8s\n", "", "best", "median", "worst");
	for (size_t b = 0; b < NBENCH; b++) {
		qsort(ns[b], ROUNDS, sizeof(double), cmp_double);
		best[b] = ns[b][0];
		med[b] = ns[b][ROUNDS / 2];
		printf("  %-48s %8.2f %8.2f %8.2f\n", benches[b].name, best[b], med[b], ns[b][ROUNDS - 1]);
	}
	printf("ratios of best rounds (of medians in brackets):\n");
	ratio("CLOCKD_MONOTONIC / vDSO CLOCK_MONOTONIC", best, med, 0, 1, 0.85);
	ratio("CLOCKD_MONOTONIC / bare lfence;rdtsc", best, med, 0, 4, 1.2);
	ratio("CLOCKD_REALTIME / vDSO CLOCK_REALTIME", best, med, 2, 3, 0.85);
	ratio("CLOCKD_MONOTONIC_COARSE / vDSO CLOCK_MONOTONIC_COARSE", best, med, 5, 6, 0.35);
	ratio("CLOCKD_REALTIME_COARSE / vDSO CLOCK_REALTIME_COARSE", best, med, 7, 8, 0.35);
	ratio("clockd_get_jiffies_64 / vDSO CLOCK_MONOTONIC_COARSE", best, med, 9, 6, 0.35);
	printf("for comparison (no target):\n");
	ratio("the coarse read called / vDSO CLOCK_MONOTONIC_COARSE", best, med, 10, 6, 1.0);
	ratio("jiffies called / vDSO CLOCK_MONOTONIC_COARSE", best, med, 11, 6, 1.0);
	ratio("rdtsc with no fence / vDSO CLOCK_MONOTONIC_COARSE", best, med, 12, 6, 1.0);
	ratio("CLOCKD_MONOTONIC called / vDSO CLOCK_MONOTONIC", best, med, 13, 1, 1.0);
	return 0;
}
