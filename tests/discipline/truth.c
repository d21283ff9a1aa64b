/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * truth FIRST_PULSE_NS PERIOD_NS SECONDS: how far CLOCKD_REALTIME of the
 * daemon at $CLOCKD_SHM is from the simulated reference's truth, read
 * every 20 ms for SECONDS. The simulated PPS puts pulse k at kernel
 * CLOCK_MONOTONIC FIRST + k * PERIOD (without its jitter) and each pulse
 * marks a whole second, so the true realtime at a monotonic time t is a
 * whole number of seconds plus (t - FIRST) / PERIOD seconds: the error is
 * clockd's realtime minus that, modulo a second. Also checks that
 * CLOCKD_MONOTONIC never goes back. Prints "# ..." lines, then
 * "RMS_NS MAX_NS BACK" on stdout; exit 0 unless a read failed (a stale
 * page, the daemon starved on a loaded machine, is counted and skipped).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <clockd/clockd.h>

#define BRACKET_MAX_NS 20000

static int64_t ns_of(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec;
}

int main(int argc, char **argv)
{
	struct timespec a, b, r, m, nap = { 0, 20000000 };
	double first, period, sum2 = 0, max = 0;
	int64_t end, last_mono = 0;
	unsigned n = 0, back = 0, loose = 0, stale = 0;

	if (argc != 4) {
		fprintf(stderr, "usage: truth FIRST_PULSE_NS PERIOD_NS SECONDS\n");
		return 2;
	}
	first = strtod(argv[1], NULL);
	period = strtod(argv[2], NULL);
	clock_gettime(CLOCK_MONOTONIC, &a);
	end = ns_of(&a) + (int64_t)(atof(argv[3]) * 1e9);
	do {
		double t, phase, err;

		nanosleep(&nap, NULL);
		clock_gettime(CLOCK_MONOTONIC, &a);
		b = a; /* the loop's test, if this is no sample */
		if (clockd_clock_gettime(CLOCKD_REALTIME, &r) < 0 ||
		    (clock_gettime(CLOCK_MONOTONIC, &b), clockd_clock_gettime(CLOCKD_MONOTONIC, &m) < 0)) {
			/* The page went stale: the tick thread was starved past
			 * the stale limit on a loaded machine. Not a sample. */
			if (errno == ESTALE) {
				stale++;
				continue;
			}
			perror("clockd_clock_gettime");
			return 1;
		}
		if (ns_of(&m) < last_mono)
			back++;
		last_mono = ns_of(&m);
		/* A read preempted between the brackets says nothing. */
		if (ns_of(&b) - ns_of(&a) > BRACKET_MAX_NS) {
			loose++;
			continue;
		}
		t = ((double)ns_of(&a) + (double)ns_of(&b)) / 2;
		/* true realtime mod 1 s, in ns */
		phase = fmod((t - first) / period, 1.0) * 1e9;
		err = fmod((double)(ns_of(&r) % 1000000000) - phase + 1.5e9, 1e9) - 0.5e9;
		sum2 += err * err;
		if (fabs(err) > max)
			max = fabs(err);
		n++;
	} while (ns_of(&b) < end);
	printf("# %u samples, %u dropped for a bracket over %d ns, %u for a stale page\n", n, loose,
	       BRACKET_MAX_NS, stale);
	printf("%.0f %.0f %u\n", sqrt(sum2 / n), max, back);
	return 0;
}
