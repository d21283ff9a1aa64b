/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Helper of switch.sh, run under libclockd-preload.so:
 *
 *   follow DIR
 *
 * Three threads read the process's clocks in a loop (two CLOCK_MONOTONIC,
 * one CLOCK_MONOTONIC_COARSE) and count every read that is behind the
 * thread's previous read, or behind a read another thread finished
 * before this one began (a per-clock atomic maximum). A fourth sleeps
 * 2 ms at a time (nanosleep, then clock_nanosleep to an absolute time) and
 * counts the sleeps that ended early on the process's clock.
 *
 * The main thread writes DIR/ready, then serves the test script: for each
 * DIR/check.N that appears it finds out whether the process reads clockd
 * time again (10 s at most) and writes the answer to DIR/result.N; when
 * DIR/stop appears it stops the threads, prints what they counted and
 * exits 0 only if no read went back and no sleep was short.
 *
 * "Reads clockd time": five times, 50 ms apart, a read of the process's
 * CLOCK_MONOTONIC lies between two reads of CLOCKD_MONOTONIC made through
 * libclockd itself just before and after it. Away from clockd the process
 * reads the kernel's clock moved by an offset, and that clock is not
 * clockd's: the daemons of switch.sh run at a rate other than the
 * kernel's, or the offset is ahead of clockd's by a margin.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <clockd/clockd.h>

#define NSEC 1000000000LL
#define SLEEP_NS 2000000LL

static int stop;
static long long reads, backward, sleeps, short_sleeps;
static long long max_mono, max_coarse;
static long long first_back; /* the first backward step, for the report */
static int sleep_err;        /* the first error of a sleep, for the report */

static long long ts_ns(const struct timespec *ts)
{
	return (long long)ts->tv_sec * NSEC + ts->tv_nsec;
}

/* The process's clock @id (through the preload library), ns. */
static long long now_ns(clockid_t id)
{
	struct timespec ts;

	if (clock_gettime(id, &ts) != 0) {
		fprintf(stderr, "clock_gettime(%d): %s\n", (int)id, strerror(errno));
		exit(2);
	}
	return ts_ns(&ts);
}

static void atomic_max(long long *p, long long v)
{
	long long cur = __atomic_load_n(p, __ATOMIC_SEQ_CST);

	while (v > cur && !__atomic_compare_exchange_n(p, &cur, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
		;
}

static void *reader(void *arg)
{
	clockid_t id = (clockid_t)(intptr_t)arg;
	long long *max = id == CLOCK_MONOTONIC ? &max_mono : &max_coarse;
	long long prev = 0, n = 0;

	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		long long before = __atomic_load_n(max, __ATOMIC_SEQ_CST);
		long long v = now_ns(id);

		if (v < prev || v < before) {
			__atomic_add_fetch(&backward, 1, __ATOMIC_RELAXED);
			long long zero = 0, step = (v < prev ? prev : before) - v;

			__atomic_compare_exchange_n(&first_back, &zero, step, false, __ATOMIC_RELAXED,
						    __ATOMIC_RELAXED);
		}
		atomic_max(max, v);
		prev = v;
		n++;
	}
	__atomic_add_fetch(&reads, n, __ATOMIC_RELAXED);
	return NULL;
}

static void *sleeper(void *arg)
{
	struct timespec req = { 0, SLEEP_NS }, abs;
	long long t0, t1;
	int err;

	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		t0 = now_ns(CLOCK_MONOTONIC);
		if (nanosleep(&req, NULL) != 0) {
			int zero = 0;

			__atomic_compare_exchange_n(&sleep_err, &zero, errno, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
			continue;
		}
		t1 = now_ns(CLOCK_MONOTONIC);
		if (t1 - t0 < SLEEP_NS)
			__atomic_add_fetch(&short_sleeps, 1, __ATOMIC_RELAXED);
		abs.tv_sec = (t1 + SLEEP_NS) / NSEC;
		abs.tv_nsec = (t1 + SLEEP_NS) % NSEC;
		err = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &abs, NULL);
		if (err != 0) {
			int zero = 0;

			__atomic_compare_exchange_n(&sleep_err, &zero, err, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
			continue;
		}
		if (now_ns(CLOCK_MONOTONIC) < t1 + SLEEP_NS)
			__atomic_add_fetch(&short_sleeps, 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(&sleeps, 2, __ATOMIC_RELAXED);
	}
	return NULL;
}

static bool exists(const char *dir, const char *name)
{
	char path[4096];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return stat(path, &st) == 0;
}

static void say(const char *dir, const char *name, const char *text)
{
	char path[4096], tmp[4200];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f || fprintf(f, "%s\n", text) < 0 || fclose(f) != 0 || rename(tmp, path) != 0) {
		perror(path);
		exit(2);
	}
}

/* One sample: the process's CLOCK_MONOTONIC between two CLOCKD_MONOTONIC
 * reads of libclockd's own. */
static bool on_clockd_once(long long *diff)
{
	struct timespec a, b;
	long long v;

	if (clockd_clock_gettime(CLOCKD_MONOTONIC, &a) != 0)
		return false;
	v = now_ns(CLOCK_MONOTONIC);
	if (clockd_clock_gettime(CLOCKD_MONOTONIC, &b) != 0)
		return false;
	*diff = v - ts_ns(&a);
	return ts_ns(&a) <= v && v <= ts_ns(&b);
}

static void check(const char *dir, int n)
{
	char name[32], text[256];
	struct timespec pause = { 0, 50000000 };
	long long end = now_ns(CLOCK_MONOTONIC) + 10 * NSEC, diff = 0, kernel;
	struct timespec ts;
	int good = 0, tries = 0;

	while (good < 5 && now_ns(CLOCK_MONOTONIC) < end) {
		tries++;
		if (on_clockd_once(&diff))
			good++;
		else
			good = 0;
		nanosleep(&pause, NULL);
	}
	/* How far clockd is from the kernel (informative). */
	kernel = 0;
	if (clockd_clock_gettime(CLOCKD_MONOTONIC, &ts) == 0) {
		struct timespec k;

		syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &k);
		kernel = ts_ns(&ts) - ts_ns(&k);
	}
	snprintf(text, sizeof(text), "%s after %d samples (last: process - clockd %lld ns; clockd - kernel %lld us)",
		 good >= 5 ? "ok" : "fail", tries, diff, kernel / 1000);
	snprintf(name, sizeof(name), "result.%d", n);
	say(dir, name, text);
}

int main(int argc, char **argv)
{
	static const clockid_t ids[] = { CLOCK_MONOTONIC, CLOCK_MONOTONIC, CLOCK_MONOTONIC_COARSE };
	pthread_t th[4];
	struct timespec pause = { 0, 10000000 };
	char name[32];
	int n = 1;

	if (argc != 3 || strcmp(argv[1], "follow") != 0) {
		fprintf(stderr, "usage: follow follow DIR\n");
		return 2;
	}
	for (int i = 0; i < 3; i++)
		if (pthread_create(&th[i], NULL, reader, (void *)(intptr_t)ids[i]) != 0)
			return 2;
	if (pthread_create(&th[3], NULL, sleeper, NULL) != 0)
		return 2;
	say(argv[2], "ready", "ready");
	while (!exists(argv[2], "stop")) {
		snprintf(name, sizeof(name), "check.%d", n);
		if (exists(argv[2], name))
			check(argv[2], n++);
		nanosleep(&pause, NULL);
	}
	/* At least one round of sleeps (a starved sleeper on a loaded
	 * machine may not have had one yet), 10 s at most. */
	for (int i = 0; i < 1000 && __atomic_load_n(&sleeps, __ATOMIC_RELAXED) == 0; i++)
		nanosleep(&pause, NULL);
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	printf("reads %lld backward %lld (first by %lld ns) sleeps %lld short %lld%s%s\n", reads, backward, first_back,
	       sleeps, short_sleeps, sleep_err ? ", sleep error: " : "", sleep_err ? strerror(sleep_err) : "");
	return backward == 0 && short_sleeps == 0 && reads > 0 && sleeps > 0 ? 0 : 1;
}
