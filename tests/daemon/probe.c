/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A client of a running daemon for the shell tests (hz.sh, wrap.sh,
 * restart.sh). The page is $CLOCKD_SHM. Each command prints "# ..." lines
 * saying what it saw and exits 0 when what it checks holds, 1 when not,
 * 2 on a usage or set-up error.
 *
 *   probe live [SECONDS]      wait until clockd_status() says LIVE
 *   probe ticks HZ COUNT      COUNT snapshots, one per new tick: the jiffies
 *                             relation, clockd_hz(), strictly increasing
 *   probe wrap                watch the 32-bit jiffies wrap (hz=1000,
 *                             jiffies_wrap_after=2)
 *   probe watch FILE          read until the daemon goes, then write the
 *                             largest "MONO_NS JIFFIES" seen to FILE
 *                             (FILE.ready appears once reading started)
 *   probe gone [stopping]     the daemon is gone: ESTALE and GONE (and the
 *                             STOPPING flag)
 *   probe after MONO_NS JIFFIES   never below, and soon above, these values
 *   probe show                print "generation hz flags"
 *   probe reads               every clockd clock and jiffies_64, once each:
 *                             exit 0 if all succeed, 3 if all fail with
 *                             ESTALE, 1 otherwise
 *   probe state               print clockd_status()'s state number
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <clockd/clockd.h>
#include "shared/latch.h"
#include "shared/tickmath.h"

#define POLL_NS 100000 /* 0.1 ms between polls */

static int64_t now_ns(void)
{
	return kclock_ns(CLOCK_MONOTONIC);
}

static void pause_briefly(void)
{
	struct timespec ts = { 0, POLL_NS };

	nanosleep(&ts, NULL);
}

static const char *state_name(uint32_t s)
{
	static const char *const names[] = { "ABSENT", "LIVE", "STALE", "GONE" };

	return s < 4 ? names[s] : "?";
}

static int cmd_live(double seconds)
{
	int64_t deadline = now_ns() + (int64_t)(seconds * 1e9);
	struct clockd_status st;

	do {
		if (clockd_status(&st, sizeof(st)) == 0 && st.state == CLOCKD_STATE_LIVE)
			return 0;
		pause_briefly();
	} while (now_ns() < deadline);
	printf("# not live after %.0f s: state %s, errno hint %s\n", seconds, state_name(st.state),
	       strerror(st.errno_hint));
	return 1;
}

/* The page, mapped read-only as any client maps it. */
static const struct clockd_page *map_page(void)
{
	const char *path = getenv("CLOCKD_SHM");
	void *m;
	int fd;

	if (!path || (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		printf("# cannot open $CLOCKD_SHM (%s)\n", path ? path : "unset");
		exit(2);
	}
	m = mmap(NULL, CLOCKD_PAGE_SIZE, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED) {
		printf("# mmap: %s\n", strerror(errno));
		exit(2);
	}
	return m;
}

/* The snapshot's jiffies_64 must be exactly what its coarse monotonic time
 * gives under the page's epoch. Returns 0 if so. */
static int check_relation(const struct clockd_page *pg, const struct clockd_page_data *d, uint32_t hz)
{
	uint64_t base = LOAD_RELAXED(&pg->jiffies_base);
	int64_t epoch = LOAD_RELAXED(&pg->jiffies_epoch_ns);
	int64_t coarse = d->coarse_mono_sec * (int64_t)NSEC_PER_SEC + d->coarse_mono_nsec;
	uint64_t want;

	if (coarse < epoch) {
		printf("# coarse monotonic %" PRId64 " before the jiffies epoch %" PRId64 "\n", coarse, epoch);
		return 1;
	}
	want = base + tick_index((uint64_t)(coarse - epoch), hz);
	if (d->jiffies_64 != want) {
		printf("# jiffies_64 %" PRIu64 " at coarse %" PRId64 ": expected %" PRIu64
		       " (base %" PRIu64 ", epoch %" PRId64 ")\n", d->jiffies_64, coarse, want, base, epoch);
		return 1;
	}
	return 0;
}

/* Wait for a snapshot whose jiffies differ from @prev. 0, or 1 on timeout. */
static int next_tick(const struct clockd_page *pg, uint64_t prev, int64_t wait_ns,
		     struct clockd_page_data *d)
{
	int64_t deadline = now_ns() + wait_ns;

	do {
		latch_snapshot(pg, d);
		if (d->jiffies_64 != prev)
			return 0;
		pause_briefly();
	} while (now_ns() < deadline);
	return 1;
}

static int cmd_ticks(uint32_t hz, int count)
{
	const struct clockd_page *pg = map_page();
	struct clockd_page_data d;
	/* three periods, at least 5 s: a loaded machine may delay a tick */
	int64_t wait_ns = 3 * (int64_t)tick_period_ns_ceil(hz) + 5 * (int64_t)NSEC_PER_SEC;
	uint64_t prev, lib;
	int bad = 0, err;

	if (clockd_hz() != hz || LOAD_RELAXED(&pg->hz) != hz) {
		printf("# clockd_hz() %u, page hz %u, expected %u\n", clockd_hz(), LOAD_RELAXED(&pg->hz), hz);
		bad++;
	}
	latch_snapshot(pg, &d);
	bad += check_relation(pg, &d, hz);
	for (int i = 0; i < count && bad < 5; i++) {
		prev = d.jiffies_64;
		errno = 0;
		lib = clockd_get_jiffies_64();
		err = errno;
		if (next_tick(pg, prev, wait_ns, &d)) {
			printf("# no new tick after jiffies %" PRIu64 " within %" PRId64 " ms\n", prev,
			       wait_ns / 1000000);
			return 1;
		}
		if (d.jiffies_64 <= prev) {
			printf("# jiffies went from %" PRIu64 " to %" PRIu64 "\n", prev, d.jiffies_64);
			bad++;
		}
		if (lib < prev || lib > d.jiffies_64) {
			printf("# clockd_get_jiffies_64() %" PRIu64 " outside [%" PRIu64 ", %" PRIu64 "]%s%s\n",
			       lib, prev, d.jiffies_64, lib == 0 ? ": " : "", lib == 0 ? strerror(err) : "");
			bad++;
		}
		bad += check_relation(pg, &d, hz);
	}
	printf("# hz %u: %d snapshots, last jiffies_64 %" PRIu64 ", %s\n", hz, count, d.jiffies_64,
	       bad ? "FAILED" : "all exact");
	return bad ? 1 : 0;
}

/* One sample of the public jiffies API. */
struct jsample {
	uint32_t j32;
	uint64_t j64;
};

/* Wrap-safe comparisons must order a later sample after an earlier one. */
static int check_order(const struct jsample *a, const struct jsample *b)
{
	if (b->j64 == a->j64)
		return 0;
	if (b->j64 > a->j64 && clockd_time_after64(b->j64, a->j64) && clockd_time_before64(a->j64, b->j64) &&
	    clockd_time_after(b->j32, a->j32) && clockd_time_before(a->j32, b->j32) &&
	    clockd_time_after_eq(b->j32, a->j32) && !clockd_time_after(a->j32, b->j32))
		return 0;
	printf("# misordered: %" PRIu64 "/%u then %" PRIu64 "/%u\n", a->j64, a->j32, b->j64, b->j32);
	return 1;
}

static int cmd_wrap(void)
{
	const uint64_t wrap = 1ull << 32;
	int64_t deadline = now_ns() + 15 * (int64_t)NSEC_PER_SEC;
	struct jsample first = { 0, 0 }, pre = { 0, 0 }, post = { 0, 0 }, prev = { 0, 0 }, s;
	int bad = 0;
	long n = 0;

	while (now_ns() < deadline && bad < 5) {
		/* One consistent sample: no tick between the two calls (a
		 * 32-bit value read before a tick beside a 64-bit one read
		 * after it would look misordered against the next sample). */
		do {
			s.j64 = clockd_get_jiffies_64();
			s.j32 = clockd_jiffies();
		} while (s.j64 != 0 && clockd_get_jiffies_64() != s.j64);
		if (s.j64 == 0) { /* not published yet */
			pause_briefly();
			continue;
		}
		if ((uint32_t)(s.j64 - s.j32) > 1000) {
			printf("# clockd_jiffies() %u is not the low half of %" PRIu64 "\n", s.j32, s.j64);
			bad++;
		}
		if (n++ == 0)
			first = s;
		else if (s.j64 < prev.j64) {
			printf("# jiffies_64 went back: %" PRIu64 " then %" PRIu64 "\n", prev.j64, s.j64);
			bad++;
		}
		if (n > 1)
			bad += check_order(&prev, &s);
		if (s.j64 < wrap)
			pre = s;
		else if (post.j64 == 0)
			post = s;
		prev = s;
		if (s.j64 >= wrap + 500 && pre.j64)
			break;
		pause_briefly();
	}
	printf("# first %" PRIu64 " (32-bit %u), last before the wrap %u, first after %u (64-bit %"
	       PRIu64 "), last %" PRIu64 " (32-bit %u), %ld samples\n", first.j64, first.j32, pre.j32,
	       post.j32, post.j64, prev.j64, prev.j32, n);
	if (!pre.j64 || pre.j32 < (uint32_t)(wrap - 2000)) {
		printf("# never saw the 32-bit jiffies above 2^32 - 2000\n");
		bad++;
	}
	if (!post.j64 || prev.j64 < wrap + 500 || post.j32 > 2000) {
		printf("# never saw the wrap through 0 (deadline 15 s)\n");
		bad++;
	}
	if (pre.j64 && post.j64)
		bad += check_order(&pre, &post);
	return bad ? 1 : 0;
}

static int cmd_watch(const char *out)
{
	struct timespec ts;
	int64_t max_mono = 0, mono;
	uint64_t max_j = 0, j;
	char ready[4096];
	FILE *f;
	long n = 0;

	snprintf(ready, sizeof(ready), "%s.ready", out);
	for (;;) {
		if (clockd_clock_gettime(CLOCKD_MONOTONIC, &ts) != 0)
			break;
		mono = ts_to_ns(&ts);
		errno = 0;
		j = clockd_get_jiffies_64();
		if (j == 0 && errno)
			break;
		if (mono < max_mono || j < max_j) {
			printf("# went back while live: %" PRId64 " after %" PRId64 ", %" PRIu64 " after %"
			       PRIu64 "\n", mono, max_mono, j, max_j);
			return 1;
		}
		max_mono = mono;
		max_j = j;
		if (++n == 1000 && (f = fopen(ready, "w")))
			fclose(f);
	}
	if (errno != ESTALE) {
		printf("# reads stopped with %s, not ESTALE\n", strerror(errno));
		return 1;
	}
	f = fopen(out, "w");
	if (!f)
		return 2;
	fprintf(f, "%" PRId64 " %" PRIu64 "\n", max_mono, max_j);
	fclose(f);
	return 0;
}

static int cmd_gone(bool stopping)
{
	struct clockd_status st;
	struct timespec ts;
	int bad = 0, r;
	uint64_t j;

	r = clockd_clock_gettime(CLOCKD_MONOTONIC, &ts);
	if (r != -1 || errno != ESTALE) {
		printf("# clockd_clock_gettime: %d, %s (expected -1 ESTALE)\n", r, strerror(errno));
		bad++;
	}
	errno = 0;
	j = clockd_get_jiffies_64();
	if (j != 0 || errno != ESTALE) {
		printf("# clockd_get_jiffies_64: %" PRIu64 ", %s (expected 0 ESTALE)\n", j, strerror(errno));
		bad++;
	}
	if (clockd_status(&st, sizeof(st)) != 0 || st.state != CLOCKD_STATE_GONE || st.errno_hint != ESTALE) {
		printf("# clockd_status: state %s, errno hint %d (expected GONE, ESTALE)\n",
		       state_name(st.state), st.errno_hint);
		bad++;
	}
	if (stopping && !(st.flags & CLOCKD_PAGE_STOPPING)) {
		printf("# flags %#x lack STOPPING\n", st.flags);
		bad++;
	}
	printf("# state %s, flags %#x, generation %" PRIu64 "\n", state_name(st.state), st.flags,
	       st.generation);
	return bad ? 1 : 0;
}

static int cmd_after(int64_t mono0, uint64_t j0)
{
	int64_t deadline = now_ns() + 10 * (int64_t)NSEC_PER_SEC;
	struct timespec ts;
	int64_t mono = 0;
	uint64_t j = 0;

	do {
		if (clockd_clock_gettime(CLOCKD_MONOTONIC, &ts) != 0) {
			printf("# clockd_clock_gettime: %s\n", strerror(errno));
			return 1;
		}
		mono = ts_to_ns(&ts);
		j = clockd_get_jiffies_64();
		if (mono <= mono0 || j < j0) {
			printf("# went back across the restart: monotonic %" PRId64 " after %" PRId64
			       ", jiffies_64 %" PRIu64 " after %" PRIu64 "\n", mono, mono0, j, j0);
			return 1;
		}
		if (j > j0)
			break;
		pause_briefly();
	} while (now_ns() < deadline);
	printf("# monotonic %+" PRId64 " ns, jiffies_64 %+" PRId64 " over the last values before\n",
	       mono - mono0, (int64_t)(j - j0));
	return j > j0 ? 0 : 1;
}

static int cmd_show(void)
{
	struct clockd_status st;

	if (clockd_status(&st, sizeof(st)) != 0)
		return 1;
	printf("%" PRIu64 " %u %#x\n", st.generation, st.hz, st.flags);
	return 0;
}

static int cmd_reads(void)
{
	static const clockid_t ids[] = {
		CLOCKD_REALTIME, CLOCKD_MONOTONIC, CLOCKD_MONOTONIC_RAW,
		CLOCKD_REALTIME_COARSE, CLOCKD_MONOTONIC_COARSE,
	};
	int good = 0, stale = 0, n = 0;
	struct timespec ts;
	uint64_t j;

	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++, n++) {
		int r = clockd_clock_gettime(ids[i], &ts);

		printf("# clock %#x: %s\n", (unsigned)ids[i], r == 0 ? "ok" : strerror(errno));
		good += r == 0;
		stale += r != 0 && errno == ESTALE;
	}
	errno = 0;
	j = clockd_get_jiffies_64();
	printf("# jiffies_64: %s\n", errno ? strerror(errno) : "ok");
	good += errno == 0 && j != 0;
	stale += errno == ESTALE;
	n++;
	return good == n ? 0 : stale == n ? 3 : 1;
}

static int cmd_state(void)
{
	struct clockd_status st;

	if (clockd_status(&st, sizeof(st)) != 0)
		return 2;
	printf("%u\n", st.state);
	return 0;
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "";

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (strcmp(cmd, "live") == 0)
		return cmd_live(argc > 2 ? atof(argv[2]) : 10);
	if (strcmp(cmd, "ticks") == 0 && argc == 4)
		return cmd_ticks((uint32_t)strtoul(argv[2], NULL, 10), atoi(argv[3]));
	if (strcmp(cmd, "wrap") == 0)
		return cmd_wrap();
	if (strcmp(cmd, "watch") == 0 && argc == 3)
		return cmd_watch(argv[2]);
	if (strcmp(cmd, "gone") == 0)
		return cmd_gone(argc > 2 && strcmp(argv[2], "stopping") == 0);
	if (strcmp(cmd, "after") == 0 && argc == 4)
		return cmd_after(strtoll(argv[2], NULL, 10), strtoull(argv[3], NULL, 10));
	if (strcmp(cmd, "show") == 0)
		return cmd_show();
	if (strcmp(cmd, "reads") == 0)
		return cmd_reads();
	if (strcmp(cmd, "state") == 0)
		return cmd_state();
	fprintf(stderr, "usage: probe live|ticks|wrap|watch|gone|after|show|reads|state ...\n");
	return 2;
}
