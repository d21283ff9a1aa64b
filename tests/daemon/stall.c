/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Readers riding through a daemon that does not update its page (issue
 * #15): four threads read the fine clocks, the coarse one and jiffies
 * while the daemon (PID) is stopped with SIGSTOP, or while both CPUs run
 * busy loops.
 *
 *   stall PID MS...         stop the daemon for each MS in turn: no fine
 *                           read fails, nothing goes backward, the fine
 *                           clocks keep time through the stop, and the
 *                           first jiffies the daemon publishes after it
 *                           is at least every value read, and time's
 *                           (jiffies caught up, not one tick on).
 *   stall --beyond PID MS   one stop past the extrapolation bound: the
 *                           fine reads fail with ESTALE past it (and only
 *                           with ESTALE), and all succeed again after.
 *   stall --busy S          S seconds with a SCHED_OTHER busy loop per CPU:
 *                           no fine read fails, nothing goes backward.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <clockd/clockd.h>
#include "tests/tap.h"

#define READERS 4

struct reader {
	pthread_t thread;
	uint64_t reads, failed, other_err, backward;
	int64_t last_mono, last_raw, last_coarse;
	uint64_t last_jiffies;
	char why[160];
};

static struct reader readers[READERS];
static int stop_readers;
static uint64_t max_jiffies; /* the largest jiffies any reader saw */

static int64_t ns_of(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec;
}

static int64_t kmono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ns_of(&ts);
}

static void sleep_ms(int64_t ms)
{
	struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* One fine read of @id: its ns, or -1 after counting the failure. */
static int64_t fine(struct reader *r, clockid_t id)
{
	struct timespec ts;

	r->reads++;
	if (clockd_clock_gettime(id, &ts) == 0)
		return ns_of(&ts);
	if (errno == ESTALE)
		r->failed++;
	else
		r->other_err++;
	return -1;
}

static void check_forward(struct reader *r, int64_t *last, int64_t now, const char *what)
{
	if (now < 0)
		return;
	if (now < *last) {
		if (!r->backward++)
			snprintf(r->why, sizeof(r->why), "%s went back from %" PRId64 " to %" PRId64, what, *last, now);
	}
	*last = now;
}

static void *reader_main(void *arg)
{
	struct reader *r = arg;
	struct timespec ts;

	while (!__atomic_load_n(&stop_readers, __ATOMIC_RELAXED)) {
		uint64_t j, seen;

		check_forward(r, &r->last_mono, fine(r, CLOCKD_MONOTONIC), "CLOCKD_MONOTONIC");
		check_forward(r, &r->last_raw, fine(r, CLOCKD_MONOTONIC_RAW), "CLOCKD_MONOTONIC_RAW");
		(void)fine(r, CLOCKD_REALTIME);
		if (clockd_clock_gettime(CLOCKD_MONOTONIC_COARSE, &ts) == 0)
			check_forward(r, &r->last_coarse, ns_of(&ts), "CLOCKD_MONOTONIC_COARSE");
		else
			r->other_err++;
		errno = 0;
		j = clockd_get_jiffies_64();
		if (j == 0 && errno != 0) {
			r->other_err++;
			continue;
		}
		if (j < r->last_jiffies && !r->backward++)
			snprintf(r->why, sizeof(r->why), "jiffies went back from %" PRIu64 " to %" PRIu64,
				 r->last_jiffies, j);
		r->last_jiffies = j;
		seen = __atomic_load_n(&max_jiffies, __ATOMIC_RELAXED);
		while (j > seen && !__atomic_compare_exchange_n(&max_jiffies, &seen, j, false, __ATOMIC_RELAXED,
								__ATOMIC_RELAXED))
			;
	}
	return NULL;
}

static void start_readers(void)
{
	for (int i = 0; i < READERS; i++)
		if (pthread_create(&readers[i].thread, NULL, reader_main, &readers[i]) != 0)
			tap_bail("pthread_create failed");
}

static void stop_and_join(void)
{
	__atomic_store_n(&stop_readers, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < READERS; i++)
		pthread_join(readers[i].thread, NULL);
}

static void totals(uint64_t *reads, uint64_t *failed, uint64_t *other, uint64_t *backward)
{
	*reads = *failed = *other = *backward = 0;
	for (int i = 0; i < READERS; i++) {
		*reads += readers[i].reads;
		*failed += readers[i].failed;
		*other += readers[i].other_err;
		*backward += readers[i].backward;
		if (readers[i].backward)
			tap_diag("reader %d: %s", i, readers[i].why);
	}
}

static int64_t mono_now(void)
{
	struct timespec ts;

	if (clockd_clock_gettime(CLOCKD_MONOTONIC, &ts) != 0)
		tap_bail("CLOCKD_MONOTONIC: %s", strerror(errno));
	return ns_of(&ts);
}

/* One SIGSTOP of @ms ms, within the bound. */
static void one_stop(pid_t pid, int64_t ms, unsigned int hz)
{
	struct clockd_status st;
	int64_t m0, m1, k0a, k0b, k1a, k1b, mb, ma, waited, lo, hi;
	uint64_t jb, j0, j1;

	jb = clockd_get_jiffies_64();
	mb = mono_now();
	if (kill(pid, SIGSTOP) != 0)
		tap_bail("kill SIGSTOP %d: %s", (int)pid, strerror(errno));
	sleep_ms(20); /* a tick already under way lands */
	j0 = clockd_get_jiffies_64();
	k0a = kmono();
	m0 = mono_now();
	k0b = kmono();
	sleep_ms(ms);
	k1a = kmono();
	m1 = mono_now();
	k1b = kmono();
	if (clockd_status(&st, sizeof(st)) != 0)
		tap_bail("clockd_status: %s", strerror(errno));
	tap_ok(st.state == CLOCKD_STATE_STALE && st.errno_hint == 0,
	       "%" PRId64 " ms stop: status says STALE with errno_hint 0 (reads extrapolate), state %u hint %d",
	       ms, st.state, st.errno_hint);
	/* Each clockd read lies between two kernel reads; the two clocks
	 * run at the same rate within 0.1 % (a TSC rate measured at start). */
	lo = k1a - k0b;
	hi = k1b - k0a;
	lo -= lo / 1000 + 100000;
	hi += hi / 1000 + 100000;
	tap_ok(m1 - m0 >= lo && m1 - m0 <= hi,
	       "%" PRId64 " ms stop: CLOCKD_MONOTONIC kept time through it (%" PRId64 " ns, kernel %" PRId64 "..%" PRId64 " ns)",
	       ms, m1 - m0, lo, hi);
	tap_ok(clockd_get_jiffies_64() == j0, "%" PRId64 " ms stop: jiffies kept the last tick's value, %" PRIu64,
	       ms, j0);
	if (kill(pid, SIGCONT) != 0)
		tap_bail("kill SIGCONT %d: %s", (int)pid, strerror(errno));
	/* The daemon's first update after the stop. */
	for (waited = 0; (j1 = clockd_get_jiffies_64()) == j0 && waited < 10000; waited++)
		sleep_ms(1);
	ma = mono_now();
	tap_ok(j1 >= __atomic_load_n(&max_jiffies, __ATOMIC_RELAXED),
	       "%" PRId64 " ms stop: the first jiffies published after it (%" PRIu64 ") is at least every value read (%" PRIu64 ")",
	       ms, j1, __atomic_load_n(&max_jiffies, __ATOMIC_RELAXED));
	/* Time's jiffies: the ticks of the time from jb to now, give or
	 * take the reads' delays (a few ticks on a loaded machine). */
	{
		int64_t want = (int64_t)((uint64_t)(ma - mb) * hz / 1000000000u);
		int64_t got = (int64_t)(j1 - jb);
		int64_t slack = 3 + want / 50;

		tap_ok(got >= want - slack && got <= want + slack,
		       "%" PRId64 " ms stop: jiffies caught up with time: +%" PRId64 " over the stop, time says +%" PRId64,
		       ms, got, want);
	}
}

static int run_stops(pid_t pid, int argc, char **argv)
{
	unsigned int hz = clockd_hz();
	uint64_t reads, failed, other, backward;

	tap_plan(5 * argc + 2);
	if (!hz)
		tap_bail("no live page: %s", strerror(errno));
	start_readers();
	sleep_ms(200);
	for (int i = 0; i < argc; i++) {
		one_stop(pid, strtoll(argv[i], NULL, 10), hz);
		sleep_ms(300);
	}
	stop_and_join();
	totals(&reads, &failed, &other, &backward);
	tap_ok(reads > 0 && failed == 0 && other == 0, "%" PRIu64 " fine reads by %d threads, %" PRIu64 " failed (ESTALE), %" PRIu64 " other errors",
	       reads, READERS, failed, other);
	tap_ok(backward == 0, "no clock and no jiffies read went backward (%" PRIu64 ")", backward);
	return tap_done();
}

/* Past the bound: fine reads fail with ESTALE, then come back. */
static int run_beyond(pid_t pid, int64_t ms)
{
	uint64_t reads, failed, other, backward;
	struct timespec ts;
	int64_t waited;
	int r, err;

	tap_plan(5);
	start_readers();
	sleep_ms(200);
	if (kill(pid, SIGSTOP) != 0)
		tap_bail("kill SIGSTOP %d: %s", (int)pid, strerror(errno));
	sleep_ms(ms);
	errno = 0;
	r = clockd_clock_gettime(CLOCKD_MONOTONIC, &ts);
	err = errno;
	tap_ok(r != 0 && err == ESTALE, "%" PRId64 " ms stop, past the bound: a fine read fails with ESTALE (%s)", ms,
	       strerror(err));
	tap_ok(clockd_clock_gettime(CLOCKD_MONOTONIC_COARSE, &ts) == 0,
	       "the coarse read still gives the last tick (a stopped daemon raises no alarm)");
	kill(pid, SIGCONT);
	for (waited = 0; clockd_clock_gettime(CLOCKD_MONOTONIC, &ts) != 0 && waited < 10000; waited++)
		sleep_ms(1);
	tap_ok(waited < 10000, "fine reads succeed again %" PRId64 " ms after SIGCONT", waited);
	sleep_ms(200);
	stop_and_join();
	totals(&reads, &failed, &other, &backward);
	tap_ok(failed > 0 && other == 0, "the readers' failures were ESTALE only (%" PRIu64 " ESTALE, %" PRIu64 " other)",
	       failed, other);
	tap_ok(backward == 0, "no clock and no jiffies read went backward (%" PRIu64 ")", backward);
	return tap_done();
}

/* Both CPUs busy with SCHED_OTHER loops for @s seconds. */
static int run_busy(int64_t s)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	uint64_t reads, failed, other, backward;
	pid_t busy[64];
	int nbusy = 0;

	tap_plan(3);
	if (ncpu < 1)
		ncpu = 1;
	for (long i = 0; i < ncpu && i < 64; i++) {
		pid_t p = fork();

		if (p == 0) {
			volatile uint64_t x = 0;

			for (;;)
				x++;
		}
		if (p > 0)
			busy[nbusy++] = p;
	}
	tap_diag("%d busy loops, %d readers, %" PRId64 " s", nbusy, READERS, s);
	start_readers();
	sleep_ms(s * 1000);
	stop_and_join();
	for (int i = 0; i < nbusy; i++) {
		kill(busy[i], SIGKILL);
		waitpid(busy[i], NULL, 0);
	}
	totals(&reads, &failed, &other, &backward);
	tap_ok(nbusy == ncpu || nbusy == 64, "a busy loop per CPU (%d of %ld)", nbusy, ncpu);
	tap_ok(reads > 0 && failed == 0 && other == 0,
	       "%" PRIu64 " fine reads under the busy loops, %" PRIu64 " failed (ESTALE), %" PRIu64 " other errors", reads,
	       failed, other);
	tap_ok(backward == 0, "no clock and no jiffies read went backward (%" PRIu64 ")", backward);
	return tap_done();
}

int main(int argc, char **argv)
{
	if (argc >= 3 && strcmp(argv[1], "--busy") == 0)
		return run_busy(strtoll(argv[2], NULL, 10));
	if (argc == 4 && strcmp(argv[1], "--beyond") == 0)
		return run_beyond((pid_t)atoi(argv[2]), strtoll(argv[3], NULL, 10));
	if (argc >= 3)
		return run_stops((pid_t)atoi(argv[1]), argc - 2, argv + 2);
	fprintf(stderr, "usage: stall PID MS... | stall --beyond PID MS | stall --busy S\n");
	return 99;
}
