/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * How closely the daemon at $CLOCKD_SHM follows the kernel's clocks.
 *
 *   follow [-p MS] [-f PPM@S]... [-v] SECONDS
 *     Every MS ms (10) for SECONDS: CLOCKD_REALTIME read between two reads
 *     of CLOCK_REALTIME, the narrowest of a few tries (the error: clockd's
 *     minus the bracket's middle; a bracket over 4 us, a preempted read,
 *     is no sample), and
 *     CLOCKD_MONOTONIC between two of CLOCK_MONOTONIC (its offset, whose
 *     drift from the first sample is reported). -f sets the kernel's
 *     frequency (adjtimex ADJ_FREQUENCY) to its value at the start plus
 *     PPM, S seconds in; the frequency at the start is restored at the end
 *     and on SIGINT/SIGTERM/SIGHUP. -v prints each error (ns) too.
 *     Prints "# ..." lines, then
 *       "N P50_NS P99_NS MAX_NS MONO_DRIFT_NS BRACKET_P50_NS"
 *     (errors in absolute value). Exit 0 unless a read failed.
 *   follow freq        the kernel's frequency and tick now ("FREQ,TICK",
 *                      adjtimex units)
 *   follow setfreq FREQ,TICK  set both (a shell's trap restores with it)
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timex.h>
#include <time.h>
#include <unistd.h>

#include <clockd/clockd.h>

#define BRACKET_MAX_NS 4000
#define TRIES 4
#define MAX_CHANGES 8

static long freq0;
static volatile sig_atomic_t freq_moved;

static int64_t ns_of(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec;
}

static int64_t kns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return ns_of(&ts);
}

static int freq_get(long *f, long *tick)
{
	struct timex tx = { 0 };

	if (adjtimex(&tx) < 0)
		return -1;
	*f = tx.freq;
	if (tick)
		*tick = tx.tick;
	return 0;
}

static int freq_set(long f)
{
	struct timex tx = { .modes = ADJ_FREQUENCY, .freq = f };

	return adjtimex(&tx) < 0 ? -1 : 0;
}

/* The frequency and the tick length (chronyd moves both). */
static int freq_tick_set(long f, long tick)
{
	struct timex tx = { .modes = ADJ_FREQUENCY | ADJ_TICK, .freq = f, .tick = tick };

	return adjtimex(&tx) < 0 ? -1 : 0;
}

static void restore(void)
{
	if (freq_moved)
		freq_set(freq0);
	freq_moved = 0;
}

static void on_signal(int sig)
{
	restore();
	signal(sig, SIG_DFL);
	raise(sig);
}

/* @clockd_id read between two reads of @kernel_id, the narrowest bracket
 * of a few tries: its offset to the bracket's middle, and the bracket's
 * width (INT64_MAX if none, a step back in between). -1 if a read failed. */
static int bracketed(clockid_t kernel_id, clockid_t clockd_id, int64_t *off, int64_t *width)
{
	*width = INT64_MAX;
	for (int i = 0; i < TRIES; i++) {
		struct timespec a, b, c;

		clock_gettime(kernel_id, &a);
		if (clockd_clock_gettime(clockd_id, &c) < 0)
			return -1;
		clock_gettime(kernel_id, &b);
		if (ns_of(&b) >= ns_of(&a) && ns_of(&b) - ns_of(&a) < *width) {
			*width = ns_of(&b) - ns_of(&a);
			*off = ns_of(&c) - (ns_of(&a) + *width / 2);
		}
	}
	return 0;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double pct(const double *v, size_t n, double p)
{
	size_t i = (size_t)(p * (double)(n - 1) + 0.5);

	return n ? v[i] : 0;
}

int main(int argc, char **argv)
{
	double ppm[MAX_CHANGES], at[MAX_CHANGES], *err, *brk, drift = 0;
	unsigned changes = 0, next = 0, loose = 0, stale = 0, over = 0;
	struct clockd_tracking tr;
	int64_t period_ms = 10, start, end, mono0 = 0;
	size_t n = 0, cap;
	bool verbose = false;
	int o;

	if (argc == 2 && strcmp(argv[1], "freq") == 0) {
		long f, tick;

		if (freq_get(&f, &tick) < 0)
			return perror("adjtimex"), 1;
		printf("%ld,%ld\n", f, tick);
		return 0;
	}
	if (argc == 3 && strcmp(argv[1], "setfreq") == 0) {
		long f, tick;

		if (sscanf(argv[2], "%ld,%ld", &f, &tick) != 2)
			goto usage;
		return freq_tick_set(f, tick) < 0 ? (perror("adjtimex"), 1) : 0;
	}
	while ((o = getopt(argc, argv, "p:f:v")) != -1) {
		switch (o) {
		case 'p':
			period_ms = atoll(optarg);
			break;
		case 'f':
			if (changes == MAX_CHANGES || sscanf(optarg, "%lf@%lf", &ppm[changes], &at[changes]) != 2)
				goto usage;
			changes++;
			break;
		case 'v':
			verbose = true;
			break;
		default:
			goto usage;
		}
	}
	if (optind + 1 != argc || period_ms <= 0)
		goto usage;
	if (changes && freq_get(&freq0, NULL) < 0)
		return perror("adjtimex"), 1;
	atexit(restore);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);
	cap = (size_t)(atof(argv[optind]) * 1000 / (double)period_ms) + 16;
	err = calloc(cap, sizeof(*err));
	brk = calloc(cap, sizeof(*brk));
	if (!err || !brk)
		return perror("calloc"), 1;
	start = kns(CLOCK_MONOTONIC);
	end = start + (int64_t)(atof(argv[optind]) * 1e9);
	for (int64_t now = start; now < end && n < cap; now = kns(CLOCK_MONOTONIC)) {
		struct timespec nap = { 0, (long)(period_ms * 1000000) };
		int64_t off, moff, w;

		while (next < changes && now - start >= (int64_t)(at[next] * 1e9)) {
			/* freq: ppm << 16 */
			if (freq_set(freq0 + (long)(ppm[next] * 65536.0)) < 0)
				return perror("adjtimex"), 1;
			freq_moved = 1;
			printf("# %.3f s: kernel frequency %+.1f ppm from the start's\n", (double)(now - start) / 1e9,
			       ppm[next]);
			next++;
		}
		nanosleep(&nap, NULL);
		if (bracketed(CLOCK_REALTIME, CLOCKD_REALTIME, &off, &w) < 0)
			goto failed;
		if (w > BRACKET_MAX_NS) {
			loose++;
			continue;
		}
		err[n] = (double)off;
		if (clockd_tracking(&tr, sizeof(tr)) == 0 && tr.state == CLOCKD_DISC_LOCKED &&
		    (double)llabs(off) > (double)tr.error_bound_ns + (double)w / 2)
			over++;
		brk[n] = (double)w;
		if (verbose)
			printf("%.0f\n", err[n]);
		n++;
		if (bracketed(CLOCK_MONOTONIC, CLOCKD_MONOTONIC, &moff, &w) < 0)
			goto failed;
		if (w > BRACKET_MAX_NS)
			continue;
		if (!mono0)
			mono0 = moff;
		if (llabs(moff - mono0) > drift)
			drift = (double)llabs(moff - mono0);
		continue;
failed:
		/* A page gone stale (the daemon starved): not a sample. */
		if (errno != ESTALE)
			return perror("clockd_clock_gettime"), 1;
		stale++;
	}
	restore();
	for (size_t i = 0; i < n; i++)
		err[i] = err[i] < 0 ? -err[i] : err[i];
	qsort(err, n, sizeof(*err), cmp);
	qsort(brk, n, sizeof(*brk), cmp);
	printf("# %zu samples, %u dropped for a bracket over %d ns, %u for a stale page\n", n, loose,
	       BRACKET_MAX_NS, stale);
	printf("# %u samples locked with |error| over the error bound (plus half the bracket)\n", over);
	printf("%zu %.0f %.0f %.0f %.0f %.0f\n", n, pct(err, n, 0.5), pct(err, n, 0.99), n ? err[n - 1] : 0, drift,
	       pct(brk, n, 0.5));
	free(err);
	free(brk);
	return 0;
usage:
	fprintf(stderr, "usage: follow [-p MS] [-f PPM@S]... [-v] SECONDS | freq | setfreq FREQ,TICK\n");
	return 2;
}
