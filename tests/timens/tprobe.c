/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Helper of timens.sh and steps.sh: what a process sees of clockd's clocks
 * and waits, measured on the kernel's CLOCK_MONOTONIC read by the system
 * call itself (neither the preload library nor the vDSO in the way; in a
 * time namespace, the namespace's).
 *
 *   tprobe reads N   read every clockd clock N times (libclockd), and the
 *                    program's own clock_gettime() (libclockd-preload.so's
 *                    when preloaded): exit 1 if a read failed; print one
 *                    line "KEY=NS ..." of clock minus kernel clock, taken
 *                    the last time round:
 *                    mono raw coarse real (libclockd) pmono praw pcoarse
 *                    (the program's CLOCK_MONOTONIC, _RAW, _COARSE),
 *                    imono icoarse (the inline reads of <clockd/clockd.h>)
 *   tprobe waits MS  start every kind of wait for MS ms at once, each in
 *                    its own thread (sleeps and timers, relative and
 *                    absolute, on the monotonic and the realtime clocks,
 *                    libclockd's and the program's own): print one line
 *                    "NAME ELAPSED_NS" per wait, in the order they end;
 *                    exit 1 if one failed
 *   tprobe absfirst MS
 *                    arm an absolute CLOCKD_MONOTONIC timer at the kernel's
 *                    CLOCK_MONOTONIC now + MS before reading any clockd
 *                    clock: print "absfirst ELAPSED_NS"
 *   tprobe late S    a 10 ms periodic CLOCKD_MONOTONIC timer and a 1 ms
 *                    periodic absolute CLOCKD_REALTIME one, both on CPU 0,
 *                    for S seconds: print "late_max NS" (the latest the
 *                    monotonic one was notified after one of its expiries)
 *                    and "fires N"
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <clockd/clockd.h>
#include "util.h"

#define NSEC 1000000000LL

static struct timespec ns_ts(long long ns)
{
	return (struct timespec){ .tv_sec = (time_t)(ns / NSEC), .tv_nsec = (long)(ns % NSEC) };
}

static long long kernel_ns(clockid_t id)
{
	struct timespec ts;

	if (syscall(SYS_clock_gettime, id, &ts) != 0)
		abort();
	return tu_ts_ns(&ts);
}

static int clockd_ns(clockid_t id, long long *ns)
{
	struct timespec ts;

	if (clockd_clock_gettime(id, &ts) != 0)
		return -1;
	*ns = tu_ts_ns(&ts);
	return 0;
}

static int own_ns(clockid_t id, long long *ns)
{
	struct timespec ts;

	if (clock_gettime(id, &ts) != 0)
		return -1;
	*ns = tu_ts_ns(&ts);
	return 0;
}

static int reads(long n)
{
	static const struct {
		const char *key;
		clockid_t c, k;
		int own;
	} tab[] = {
		{ "mono", CLOCKD_MONOTONIC, CLOCK_MONOTONIC, 0 },
		{ "raw", CLOCKD_MONOTONIC_RAW, CLOCK_MONOTONIC_RAW, 0 },
		{ "coarse", CLOCKD_MONOTONIC_COARSE, CLOCK_MONOTONIC_COARSE, 0 },
		{ "real", CLOCKD_REALTIME, CLOCK_REALTIME, 0 },
		{ "pmono", CLOCK_MONOTONIC, CLOCK_MONOTONIC, 1 },
		{ "praw", CLOCK_MONOTONIC_RAW, CLOCK_MONOTONIC_RAW, 1 },
		{ "pcoarse", CLOCK_MONOTONIC_COARSE, CLOCK_MONOTONIC_COARSE, 1 },
	};
	long long d[sizeof(tab) / sizeof(tab[0])] = { 0 }, imono = 0, icoarse = 0;
	long fails = 0;

	for (long i = 0; i < n; i++) {
		for (size_t k = 0; k < sizeof(tab) / sizeof(tab[0]); k++) {
			long long v, k0 = kernel_ns(tab[k].k), k1;

			if ((tab[k].own ? own_ns(tab[k].c, &v) : clockd_ns(tab[k].c, &v)) != 0) {
				if (fails++ < 5)
					printf("# read %s: %s\n", tab[k].key, strerror(errno));
				continue;
			}
			k1 = kernel_ns(tab[k].k);
			d[k] = v - (k0 + (k1 - k0) / 2);
		}
	}
	/* The inline reads of <clockd/clockd.h> (a constant id). */
	for (long i = 0; i < n; i++) {
		struct timespec ts;
		long long k0 = kernel_ns(CLOCK_MONOTONIC);

		if (clockd_clock_gettime(CLOCKD_MONOTONIC, &ts) != 0)
			fails++;
		else
			imono = tu_ts_ns(&ts) - (k0 + (kernel_ns(CLOCK_MONOTONIC) - k0) / 2);
		k0 = kernel_ns(CLOCK_MONOTONIC_COARSE);
		if (clockd_clock_gettime(CLOCKD_MONOTONIC_COARSE, &ts) != 0)
			fails++;
		else
			icoarse = tu_ts_ns(&ts) - k0;
	}
	for (size_t k = 0; k < sizeof(tab) / sizeof(tab[0]); k++)
		printf("%s%s=%lld", k ? " " : "", tab[k].key, d[k]);
	printf(" imono=%lld icoarse=%lld\n", imono, icoarse);
	if (fails)
		printf("# %ld reads failed\n", fails);
	return fails ? 1 : 0;
}

/* ---- waits ---- */

enum kind { SLEEP_NANO, SLEEP_OWN, SLEEP_CLOCKD, TIMER_OWN, TIMER_CLOCKD, TIMER_CLOCKD_PERIODIC };

struct wait {
	const char *name;
	enum kind kind;
	clockid_t clock;
	int abs;
	int signo; /* TIMER_OWN */
	long long elapsed;
	int err;
};

static long long span_ns;
static pthread_barrier_t go;

static int now_on(const struct wait *w, long long *ns)
{
	if (w->kind == SLEEP_CLOCKD || w->kind == TIMER_CLOCKD || w->kind == TIMER_CLOCKD_PERIODIC)
		return clockd_ns(w->clock, ns);
	return own_ns(w->clock, ns);
}

/* How long a notification may take: 5 spans, 10 s at least (a loaded
 * machine; a lost timer never comes). */
static long long limit_ns(void)
{
	return 5 * span_ns > 10 * NSEC ? 5 * span_ns : 10 * NSEC;
}

/* Wait for @n notifications of eventfd @fd, limit_ns() at most. */
static int fd_wait(int fd, uint64_t n)
{
	uint64_t got = 0, c;

	while (got < n) {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		if (poll(&p, 1, (int)(limit_ns() / 1000000)) != 1)
			return ETIMEDOUT;
		if (read(fd, &c, sizeof(c)) == sizeof(c))
			got += c;
	}
	return 0;
}

static int run_wait(struct wait *w, long long *start)
{
	struct itimerspec v = { { 0, 0 }, ns_ts(span_ns) };
	struct timespec req = ns_ts(span_ns);
	long long now = 0;
	int flags = w->abs ? TIMER_ABSTIME : 0;

	*start = kernel_ns(CLOCK_MONOTONIC);
	if (w->abs) {
		if (now_on(w, &now) != 0)
			return errno;
		req = ns_ts(now + span_ns);
		v.it_value = req;
	}
	switch (w->kind) {
	case SLEEP_NANO:
		return nanosleep(&req, NULL) ? errno : 0;
	case SLEEP_OWN:
		return clock_nanosleep(w->clock, flags, &req, NULL);
	case SLEEP_CLOCKD:
		return clockd_clock_nanosleep(w->clock, flags, &req, NULL);
	case TIMER_OWN: {
		struct sigevent sev = { .sigev_notify = SIGEV_SIGNAL, .sigev_signo = w->signo };
		struct timespec limit = ns_ts(limit_ns());
		sigset_t set;
		timer_t t;
		int r;

		if (timer_create(w->clock, &sev, &t) != 0)
			return errno;
		if (timer_settime(t, flags, &v, NULL) != 0)
			return errno;
		sigemptyset(&set);
		sigaddset(&set, w->signo);
		r = sigtimedwait(&set, NULL, &limit) == w->signo ? 0 : errno;
		timer_delete(t);
		return r;
	}
	default: {
		struct clockd_sigevent sev = { .notify = CLOCKD_SIGEV_FD, .cpu = -1 };
		clockd_timer_t t;
		int r;

		if (clockd_timer_create(w->clock, &sev, &t) != 0)
			return errno;
		if (w->kind == TIMER_CLOCKD_PERIODIC) {
			/* Two expiries half a span apart: the period measures
			 * elapsed time too. */
			v.it_value = ns_ts(span_ns / 2);
			v.it_interval = ns_ts(span_ns / 2);
		}
		if (clockd_timer_settime(t, flags, &v, NULL) != 0)
			return errno;
		r = fd_wait(clockd_timer_fd(t), w->kind == TIMER_CLOCKD_PERIODIC ? 2 : 1);
		clockd_timer_delete(t);
		return r;
	}
	}
}

static void *wait_thread(void *arg)
{
	struct wait *w = arg;
	long long start;

	pthread_barrier_wait(&go);
	w->err = run_wait(w, &start);
	w->elapsed = kernel_ns(CLOCK_MONOTONIC) - start;
	printf("%s %lld%s%s\n", w->name, w->elapsed, w->err ? " error " : "", w->err ? strerror(w->err) : "");
	fflush(stdout);
	return NULL;
}

static int waits(long ms)
{
	static struct wait tab[] = {
		{ "nanosleep", SLEEP_NANO, CLOCK_MONOTONIC, 0, 0, 0, 0 },
		{ "sleep-mono-rel", SLEEP_OWN, CLOCK_MONOTONIC, 0, 0, 0, 0 },
		{ "sleep-mono-abs", SLEEP_OWN, CLOCK_MONOTONIC, 1, 0, 0, 0 },
		{ "sleep-real-rel", SLEEP_OWN, CLOCK_REALTIME, 0, 0, 0, 0 },
		{ "timer-mono-rel", TIMER_OWN, CLOCK_MONOTONIC, 0, 0, 0, 0 },
		{ "timer-mono-abs", TIMER_OWN, CLOCK_MONOTONIC, 1, 0, 0, 0 },
		{ "timer-real-rel", TIMER_OWN, CLOCK_REALTIME, 0, 0, 0, 0 },
		{ "clockd-sleep-mono-rel", SLEEP_CLOCKD, CLOCKD_MONOTONIC, 0, 0, 0, 0 },
		{ "clockd-sleep-mono-abs", SLEEP_CLOCKD, CLOCKD_MONOTONIC, 1, 0, 0, 0 },
		{ "clockd-sleep-real-rel", SLEEP_CLOCKD, CLOCKD_REALTIME, 0, 0, 0, 0 },
		{ "clockd-timer-mono-rel", TIMER_CLOCKD, CLOCKD_MONOTONIC, 0, 0, 0, 0 },
		{ "clockd-timer-mono-abs", TIMER_CLOCKD, CLOCKD_MONOTONIC, 1, 0, 0, 0 },
		{ "clockd-timer-real-rel", TIMER_CLOCKD, CLOCKD_REALTIME, 0, 0, 0, 0 },
		{ "clockd-timer-real-periodic", TIMER_CLOCKD_PERIODIC, CLOCKD_REALTIME, 0, 0, 0, 0 },
	};
	enum { N = sizeof(tab) / sizeof(tab[0]) };
	pthread_t th[N];
	sigset_t set;
	int sig = SIGRTMIN, fails = 0;

	span_ns = ms * 1000000LL;
	sigemptyset(&set);
	for (int i = 0; i < N; i++) {
		if (tab[i].kind == TIMER_OWN) {
			tab[i].signo = sig++;
			sigaddset(&set, tab[i].signo);
		}
	}
	/* Blocked in every thread: each timer's thread takes its own. */
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	pthread_barrier_init(&go, NULL, N);
	for (int i = 0; i < N; i++)
		if (pthread_create(&th[i], NULL, wait_thread, &tab[i]) != 0)
			return 2;
	for (int i = 0; i < N; i++) {
		pthread_join(th[i], NULL);
		fails += tab[i].err != 0;
	}
	return fails ? 1 : 0;
}

/* ---- absfirst ---- */

/* An absolute CLOCKD_MONOTONIC timer armed before this process read any
 * clockd clock, at the kernel's CLOCK_MONOTONIC now + @ms (the same clock
 * in any namespace, give or take the rates): print the ns it took. */
static int absfirst(long ms)
{
	struct clockd_sigevent sev = { .notify = CLOCKD_SIGEV_FD, .cpu = -1 };
	struct itimerspec v = { { 0, 0 }, { 0, 0 } };
	long long start = kernel_ns(CLOCK_MONOTONIC);
	clockd_timer_t t;
	int r;

	span_ns = ms * 1000000LL;
	if (clockd_timer_create(CLOCKD_MONOTONIC, &sev, &t) != 0)
		return 2;
	v.it_value = ns_ts(start + span_ns);
	if (clockd_timer_settime(t, TIMER_ABSTIME, &v, NULL) != 0)
		return 2;
	r = fd_wait(clockd_timer_fd(t), 1);
	printf("absfirst %lld%s\n", kernel_ns(CLOCK_MONOTONIC) - start, r ? " error" : "");
	clockd_timer_delete(t);
	return r ? 1 : 0;
}

/* ---- late ---- */

static int late(long secs)
{
	struct clockd_sigevent sev = { .notify = CLOCKD_SIGEV_FD, .cpu = 0 };
	struct itimerspec mv = { { 0, 10000000 }, { 0, 10000000 } }, rv = { { 0, 1000000 }, { 0, 1000000 } };
	clockd_timer_t m, r;
	long long first, late_max = 0, end;
	uint64_t fires = 0, c;
	struct timespec now;

	if (clockd_timer_create(CLOCKD_MONOTONIC, &sev, &m) != 0 || clockd_timer_create(CLOCKD_REALTIME, &sev, &r) != 0)
		return 2;
	if (clockd_clock_gettime(CLOCKD_REALTIME, &now) != 0)
		return 2;
	rv.it_value = ns_ts(tu_ts_ns(&now) + 1000000);
	if (clockd_timer_settime(r, TIMER_ABSTIME, &rv, NULL) != 0)
		return 2;
	/* The monotonic timer's expiries are first + k * 10 ms of
	 * CLOCKD_MONOTONIC; each wake-up is compared with the last of them. */
	if (clockd_clock_gettime(CLOCKD_MONOTONIC, &now) != 0)
		return 2;
	first = tu_ts_ns(&now) + 10000000;
	mv.it_value = ns_ts(first);
	if (clockd_timer_settime(m, TIMER_ABSTIME, &mv, NULL) != 0)
		return 2;
	end = first + secs * NSEC;
	for (;;) {
		struct pollfd p = { .fd = clockd_timer_fd(m), .events = POLLIN };
		long long t, due;

		if (poll(&p, 1, 100) < 0)
			return 2;
		if (clockd_clock_gettime(CLOCKD_MONOTONIC, &now) != 0)
			return 2;
		t = tu_ts_ns(&now);
		if (p.revents && read(p.fd, &c, sizeof(c)) == sizeof(c)) {
			fires += c;
			due = first + (long long)(fires - 1) * 10000000;
			/* Notified after the next expiry was due too: late
			 * by at least the time since the first missed one. */
			if (t - due > late_max)
				late_max = t - due;
		} else if (fires && t - (first + (long long)fires * 10000000) > late_max) {
			late_max = t - (first + (long long)fires * 10000000);
		}
		if (t >= end)
			break;
	}
	printf("late_max %lld\nfires %llu\n", late_max, (unsigned long long)fires);
	clockd_timer_delete(m);
	clockd_timer_delete(r);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "reads") == 0)
		return reads(atol(argv[2]));
	if (argc == 3 && strcmp(argv[1], "waits") == 0)
		return waits(atol(argv[2]));
	if (argc == 3 && strcmp(argv[1], "absfirst") == 0)
		return absfirst(atol(argv[2]));
	if (argc == 3 && strcmp(argv[1], "late") == 0)
		return late(atol(argv[2]));
	fprintf(stderr, "usage: tprobe reads N | waits MS | absfirst MS | late S\n");
	return 2;
}
