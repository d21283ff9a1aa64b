/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bound sample SECONDS: every 100 ms for SECONDS, read the daemon at
 * $CLOCKD_SHM: CLOCKD_REALTIME between two reads of the kernel's
 * CLOCK_MONOTONIC, and clockd_tracking(). One line a sample on stdout:
 * "MID_NS BRACKET_NS REAL_FRAC_NS STATE SYNCED BOUND_NS EVENT_NS" (MID the
 * bracket's middle; REAL_FRAC realtime's nanoseconds in its second; EVENT
 * the kernel CLOCK_MONOTONIC of the last reference event, 0 for none).
 *
 * bound check LOG SAMPLES: the true error of each sample, from the
 * simulation's truth in the daemon's LOG (the "tick sim: truth from"
 * lines, clockd.conf(5)): from kernel CLOCK_MONOTONIC FROM on, pulse K
 * is whole second K at nominal time AT, a second lasting PERIOD ns. A
 * sample is held to the truth in force at its time or (1 ms after) the daemon's
 * last reference event, whichever is earlier: a reference that moves
 * between two pulses says so only with the next, and no bound can know
 * it before.
 * Prints, for samples synced (locked) and in holdover, how many there
 * are and how many of them the error bound contains (allowing half the
 * read's bracket); and over the locked samples the true RMS error, the
 * median bound and the largest true error; the time from the first
 * holdover sample to the last, and how far the true error drifted in
 * holdover: the largest difference between the median true error of ten
 * holdover samples in a row (about a second) and that of the first ten (a
 * read preempted within its bracket is off by up to half the bracket, a
 * few us: one such read is no drift):
 * "SYNCED IN_SYNCED HOLDOVER IN_HOLDOVER RMS_NS MEDIAN_BOUND_NS MAX_NS HOLD_S
 * HOLD_DRIFT_NS".
 * Each sample outside its bound is shown as a "# " line, and how close
 * the true error came to its bound.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <clockd/clockd.h>
#include <clockd/page.h>

#define BRACKET_MAX_NS 20000
#define MAX_SEGMENTS 64
#define MAX_SAMPLES 100000
#define HOLD_BLOCK 10 /* holdover samples a median of which the drift compares */

struct segment {
	double from, at, period;
	long long k;
};

static int64_t ns_of(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec;
}

static int sample(double seconds)
{
	struct timespec a, b, r, nap = { 0, 100000000 };
	struct clockd_tracking t;
	int64_t end;
	unsigned stale = 0;

	clock_gettime(CLOCK_MONOTONIC, &a);
	end = ns_of(&a) + (int64_t)(seconds * 1e9);
	for (;;) {
		nanosleep(&nap, NULL);
		clock_gettime(CLOCK_MONOTONIC, &a);
		if (ns_of(&a) >= end)
			break;
		if (clockd_clock_gettime(CLOCKD_REALTIME, &r) < 0 || clockd_tracking(&t, sizeof(t)) < 0) {
			/* The tick thread starved past the stale limit on a
			 * loaded machine: not a sample. */
			if (errno == ESTALE) {
				stale++;
				continue;
			}
			perror("clockd");
			return 1;
		}
		clock_gettime(CLOCK_MONOTONIC, &b);
		/* clockd_tracking() after the time read: its bound is as
		 * new as the time or newer. A read preempted between the
		 * brackets says nothing. */
		if (ns_of(&b) - ns_of(&a) > BRACKET_MAX_NS)
			continue;
		int64_t mid = (ns_of(&a) + ns_of(&b)) / 2;

		printf("%" PRId64 " %" PRId64 " %ld %u %u %" PRIu64 " %" PRId64 "\n", mid, ns_of(&b) - ns_of(&a),
		       r.tv_nsec, t.state, t.synced, t.error_bound_ns,
		       t.since_event_ns >= 0 ? mid - t.since_event_ns : 0);
	}
	fprintf(stderr, "# %u reads failed with ESTALE\n", stale);
	return 0;
}

static int load_truth(const char *log, struct segment *seg)
{
	char line[512];
	int n = 0;
	FILE *f = fopen(log, "r");

	if (!f) {
		perror(log);
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		const char *p = strstr(line, "tick sim: truth from kernel CLOCK_MONOTONIC ");

		if (!p || n == MAX_SEGMENTS)
			continue;
		if (sscanf(p, "tick sim: truth from kernel CLOCK_MONOTONIC %lf ns: pulse %lld at %lf ns, period %lf",
			   &seg[n].from, &seg[n].k, &seg[n].at, &seg[n].period) == 4)
			n++;
	}
	fclose(f);
	return n;
}

/* The true error of realtime's fraction @frac at kernel monotonic @t, ns,
 * by the truth in force at @known. */
static double true_error(const struct segment *seg, int nseg, double t, double known, double frac)
{
	const struct segment *s = &seg[0];
	double phase;

	for (int i = 1; i < nseg; i++)
		if (seg[i].from <= known)
			s = &seg[i];
	phase = (t - s->at) / s->period;
	phase = (phase - floor(phase)) * 1e9;
	return fmod(frac - phase + 1.5e9, 1e9) - 0.5e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int check(const char *log, const char *samples)
{
	struct segment seg[MAX_SEGMENTS];
	static double bounds[MAX_SAMPLES];
	unsigned synced = 0, in_synced = 0, hold = 0, in_hold = 0, nb = 0;
	double sum2 = 0, max = 0, t, bracket, frac, bnd, event, hold_first = 0, hold_last = 0, tightest = 0;
	static double hold_err[MAX_SAMPLES];
	unsigned state, sy;
	int nseg = load_truth(log, seg);
	FILE *f = fopen(samples, "r");

	if (nseg <= 0 || !f) {
		fprintf(stderr, "bound: no truth in %s, or no %s\n", log, samples);
		return 1;
	}
	while (fscanf(f, "%lf %lf %lf %u %u %lf %lf", &t, &bracket, &frac, &state, &sy, &bnd, &event) == 7) {
		double err = true_error(seg, nseg, t, event > 0 && event + 1e6 < t ? event + 1e6 : t, frac);
		double slack = bnd + bracket / 2 + 100;
		bool in = fabs(err) <= slack;

		if (sy && state == CLOCKD_DISC_LOCKED) {
			synced++;
			in_synced += in;
			sum2 += err * err;
			max = fmax(max, fabs(err));
			if (nb < MAX_SAMPLES)
				bounds[nb++] = bnd;
		} else if (state == CLOCKD_DISC_HOLDOVER) {
			if (hold == 0)
				hold_first = t;
			if (hold < MAX_SAMPLES)
				hold_err[hold] = err;
			hold++;
			hold_last = t;
			in_hold += in;
		} else {
			continue;
		}
		tightest = fmax(tightest, fabs(err) / slack);
		if (!in)
			printf("# at %.0f ns (%s): true error %+.0f ns, bound %.0f ns\n", t,
			       state == CLOCKD_DISC_HOLDOVER ? "holdover" : "locked", err, bnd);
	}
	fclose(f);
	qsort(bounds, nb, sizeof(bounds[0]), cmp_double);
	double hold_drift = 0, first = 0;

	for (unsigned i = 0; i + HOLD_BLOCK <= hold && i + HOLD_BLOCK <= MAX_SAMPLES; i += HOLD_BLOCK) {
		double block[HOLD_BLOCK];

		memcpy(block, hold_err + i, sizeof(block));
		qsort(block, HOLD_BLOCK, sizeof(block[0]), cmp_double);
		if (i == 0)
			first = block[HOLD_BLOCK / 2];
		hold_drift = fmax(hold_drift, fabs(block[HOLD_BLOCK / 2] - first));
	}
	printf("# the largest true error was %.0f %% of its bound\n", tightest * 100);
	printf("%u %u %u %u %.0f %.0f %.0f %.1f %.0f\n", synced, in_synced, hold, in_hold,
	       synced ? sqrt(sum2 / synced) : 0, nb ? bounds[nb / 2] : 0, max, (hold_last - hold_first) / 1e9,
	       hold_drift);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "sample") == 0)
		return sample(atof(argv[2]));
	if (argc == 4 && strcmp(argv[1], "check") == 0)
		return check(argv[2], argv[3]);
	fprintf(stderr, "usage: bound sample SECONDS | bound check LOG SAMPLES\n");
	return 2;
}
