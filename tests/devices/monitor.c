/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * monitor SECONDS: read CLOCKD_MONOTONIC, _MONOTONIC_RAW, _MONOTONIC_COARSE
 * and jiffies_64 of the daemon at $CLOCKD_SHM every 50 us for SECONDS, and
 * count reads that went back. ESTALE is counted, not an error (a daemon
 * between devices may be stale for a moment). Prints one "# ..." summary
 * line; exits 0 when nothing went back and most reads succeeded, 1 if not.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <clockd/clockd.h>

static const struct {
	const char *name;
	clockid_t id;
} clocks[] = {
	{ "monotonic", CLOCKD_MONOTONIC },
	{ "monotonic_raw", CLOCKD_MONOTONIC_RAW },
	{ "monotonic_coarse", CLOCKD_MONOTONIC_COARSE },
};
#define N_CLOCKS (sizeof(clocks) / sizeof(clocks[0]))

static int64_t ns_of(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec;
}

int main(int argc, char **argv)
{
	int64_t last[N_CLOCKS + 1] = { 0 }, end;
	uint64_t reads = 0, stale = 0, errors = 0, back[N_CLOCKS + 1] = { 0 };
	struct timespec ts, nap = { 0, 50000 };
	uint64_t backs = 0;

	if (argc != 2 || atoi(argv[1]) <= 0) {
		fprintf(stderr, "usage: monitor SECONDS\n");
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	end = ns_of(&ts) + (int64_t)atoi(argv[1]) * 1000000000;
	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		if (ns_of(&ts) > end)
			break;
		for (size_t i = 0; i <= N_CLOCKS; i++) {
			int64_t v;

			if (i < N_CLOCKS) {
				if (clockd_clock_gettime(clocks[i].id, &ts) < 0) {
					errno == ESTALE ? stale++ : errors++;
					continue;
				}
				v = ns_of(&ts);
			} else {
				uint64_t j;

				errno = 0;
				j = clockd_get_jiffies_64();
				if (j == 0 && errno) {
					errno == ESTALE ? stale++ : errors++;
					continue;
				}
				v = (int64_t)j;
			}
			reads++;
			if (v < last[i]) {
				back[i]++;
				fprintf(stderr, "# %s went back: %" PRId64 " after %" PRId64 "\n",
					i < N_CLOCKS ? clocks[i].name : "jiffies_64", v, last[i]);
			}
			if (v > last[i])
				last[i] = v;
		}
		nanosleep(&nap, NULL);
	}
	for (size_t i = 0; i <= N_CLOCKS; i++)
		backs += back[i];
	printf("# monitor: %" PRIu64 " reads, %" PRIu64 " stale, %" PRIu64 " other errors, %" PRIu64
	       " backward (monotonic %" PRIu64 ", raw %" PRIu64 ", coarse %" PRIu64 ", jiffies %" PRIu64 ")\n",
	       reads, stale, errors, backs, back[0], back[1], back[2], back[3]);
	return backs == 0 && errors == 0 && reads > stale ? 0 : 1;
}
