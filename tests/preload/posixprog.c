/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * An unmodified POSIX program (it knows nothing of clockd, and links no
 * libclockd): tests/preload/posix.sh runs it under `clockctl run` with
 * CLOCKD_PRELOAD=refuse, and plainly, and checks what POSIX and the
 * kernel say of timers, sleeps and signals (issue 26, items 1-5). Each
 * command prints one line of results and exits 0, or 1 with a reason.
 *
 *   sigsafe   a SIGALRM handler re-arms a CLOCK_MONOTONIC timer with
 *             timer_settime while main loops on timer_gettime, 2 s
 *   rem       nanosleep and relative clock_nanosleep of 5 s, interrupted
 *             after 1 s: the time left
 *   short     an interval of 1 ns, and a 1 ns timer due 2500 s ago
 *   queue     SIGRTMIN blocked 1 s, a 10 ms periodic timer: the signals
 *             queued, their si_code and si_overrun, timer_getoverrun
 *   eintr     the first timer_settime with SIGALRM every 20 us (SA_RESTART)
 *   quota N   create and arm (1 h) up to N timers, stopping at the first
 *             failure: how many were armed, which call failed and how,
 *             and how many of those armed are still pending 0.5 s later
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static timer_t tid;
static volatile sig_atomic_t fires;

static long long now_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int fail(const char *what)
{
	printf("%s: %s\n", what, strerror(errno));
	return 1;
}

static void on_rearm(int sig)
{
	struct itimerspec v = { .it_value = { 0, 200000 } };
	int err = errno;

	(void)sig;
	timer_settime(tid, 0, &v, NULL);
	fires++;
	errno = err;
}

static int cmd_sigsafe(void)
{
	struct sigaction sa = { .sa_handler = on_rearm, .sa_flags = SA_RESTART };
	struct sigevent sev = { .sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGALRM };
	struct itimerspec v = { .it_value = { 0, 200000 } }, g;
	long long end;
	long loops = 0;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	if (timer_create(CLOCK_MONOTONIC, &sev, &tid) != 0)
		return fail("timer_create");
	if (timer_settime(tid, 0, &v, NULL) != 0)
		return fail("timer_settime");
	end = now_ns(CLOCK_MONOTONIC) + 2000000000LL;
	while (now_ns(CLOCK_MONOTONIC) < end) {
		if (timer_gettime(tid, &g) != 0)
			return fail("timer_gettime");
		loops++;
	}
	printf("fires %d loops %ld\n", (int)fires, loops);
	return 0;
}

static void on_nothing(int sig)
{
	(void)sig;
}

static int cmd_rem(void)
{
	struct sigaction sa = { .sa_handler = on_nothing }; /* no SA_RESTART */
	struct itimerval it = { .it_value = { 1, 0 } };
	struct timespec req = { 5, 0 }, rem = { -1, 0 }, rem2 = { -1, 0 };
	int r, e, r2, e2;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	r = nanosleep(&req, &rem);
	e = errno;
	setitimer(ITIMER_REAL, &it, NULL);
	r2 = clock_nanosleep(CLOCK_MONOTONIC, 0, &req, &rem2);
	e2 = r2;
	printf("nanosleep %d %s rem %ld.%09ld clock_nanosleep %s rem %ld.%09ld\n", r, r ? strerror(e) : "ok",
	       (long)rem.tv_sec, rem.tv_nsec, r2 ? strerror(e2) : "ok", (long)rem2.tv_sec, rem2.tv_nsec);
	return 0;
}

static int cmd_short(void)
{
	struct sigevent none = { .sigev_notify = SIGEV_NONE };
	struct sigevent sev = { .sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGRTMIN };
	struct itimerspec v = { .it_value = { 1, 0 }, .it_interval = { 0, 1 } }, g;
	struct timespec zero = { 0, 0 }, later = { 0, 20000000 };
	siginfo_t si;
	sigset_t set;
	timer_t t;
	int r;

	if (timer_create(CLOCK_MONOTONIC, &none, &t) != 0)
		return fail("timer_create");
	r = timer_settime(t, 0, &v, NULL);
	if (r != 0)
		return fail("timer_settime, 1 ns interval");
	if (timer_gettime(t, &g) != 0)
		return fail("timer_gettime");
	timer_delete(t);
	printf("interval-1ns ok gettime-interval %ld ", g.it_interval.tv_nsec);

	sigemptyset(&set);
	sigaddset(&set, SIGRTMIN);
	sigprocmask(SIG_BLOCK, &set, NULL);
	if (timer_create(CLOCK_REALTIME, &sev, &t) != 0)
		return fail("timer_create");
	clock_gettime(CLOCK_REALTIME, &v.it_value);
	v.it_value.tv_sec -= 2500;
	if (timer_settime(t, TIMER_ABSTIME, &v, NULL) != 0)
		return fail("timer_settime, 2500 s ago");
	if (sigwaitinfo(&set, &si) < 0)
		return fail("sigwaitinfo");
	/* The timer's next signal is sent and pending by now (its period
	 * runs at 100 us): timer_getoverrun() tells the one taken. */
	while (nanosleep(&later, &later) != 0 && errno == EINTR)
		;
	printf("overrun-2500s %d\n", timer_getoverrun(t));
	timer_delete(t);
	while (sigtimedwait(&set, &si, &zero) > 0)
		;
	return 0;
}

static int cmd_queue(void)
{
	struct sigevent sev = { .sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGRTMIN };
	struct itimerspec v = { .it_value = { 0, 10000000 }, .it_interval = { 0, 10000000 } };
	struct timespec zero = { 0, 0 }, sec = { 1, 0 };
	long long t0, t1;
	int n = 0, code = 0, over = -1, got = -1, timerid = -1;
	siginfo_t si;
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGRTMIN);
	sigprocmask(SIG_BLOCK, &set, NULL);
	if (timer_create(CLOCK_MONOTONIC, &sev, &tid) != 0)
		return fail("timer_create");
	t0 = now_ns(CLOCK_MONOTONIC);
	if (timer_settime(tid, 0, &v, NULL) != 0)
		return fail("timer_settime");
	while (nanosleep(&sec, &sec) != 0 && errno == EINTR)
		;
	t1 = now_ns(CLOCK_MONOTONIC);
	while (sigtimedwait(&set, &si, &zero) > 0) {
		if (n++ == 0) {
			code = si.si_code;
			over = si.si_overrun;
			timerid = si.si_timerid;
			got = timer_getoverrun(tid);
		}
	}
	timer_delete(tid);
	printf("signals %d si_code %s si_overrun %d getoverrun %d expiries %lld si_timerid %s\n", n,
	       code == SI_TIMER ? "SI_TIMER" : code == SI_QUEUE ? "SI_QUEUE" : "other", over, got,
	       (t1 - t0) / 10000000, timerid == (int)(intptr_t)tid ? "timer_t" : "other");
	return 0;
}

static int cmd_eintr(void)
{
	struct sigaction sa = { .sa_handler = on_nothing, .sa_flags = SA_RESTART };
	struct itimerval it = { .it_value = { 0, 20 }, .it_interval = { 0, 20 } };
	struct sigevent none = { .sigev_notify = SIGEV_NONE };
	struct itimerspec v = { .it_value = { 10, 0 } };
	timer_t t;
	int r, e;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	if (timer_create(CLOCK_MONOTONIC, &none, &t) != 0)
		return fail("timer_create");
	setitimer(ITIMER_REAL, &it, NULL);
	r = timer_settime(t, 0, &v, NULL);
	e = errno;
	it = (struct itimerval){ { 0, 0 }, { 0, 0 } };
	setitimer(ITIMER_REAL, &it, NULL);
	printf("timer_settime %s\n", r == 0 ? "ok" : strerror(e));
	return 0;
}

static int cmd_quota(int n)
{
	struct sigevent none = { .sigev_notify = SIGEV_NONE };
	struct itimerspec v = { .it_value = { 3600, 0 } }, left;
	struct timespec half = { 0, 500000000 };
	const char *failed = "none";
	timer_t *ids = calloc((size_t)n, sizeof(*ids));
	int armed = 0, err = 0, pending = 0;

	if (!ids)
		return fail("calloc");
	for (; armed < n; armed++) {
		if (timer_create(CLOCK_MONOTONIC, &none, &ids[armed]) != 0) {
			failed = "timer_create";
			err = errno;
			break;
		}
		if (timer_settime(ids[armed], 0, &v, NULL) != 0) {
			failed = "timer_settime";
			err = errno;
			timer_delete(ids[armed]);
			break;
		}
	}
	nanosleep(&half, NULL);
	for (int i = 0; i < armed; i++)
		pending += timer_gettime(ids[i], &left) == 0 && left.it_value.tv_sec > 0;
	printf("armed %d failed %s %s pending %d\n", armed, failed, err == EAGAIN ? "EAGAIN" : err ? strerror(err) : "-",
	       pending);
	for (int i = 0; i < armed; i++)
		timer_delete(ids[i]);
	free(ids);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 2 && strcmp(argv[1], "sigsafe") == 0)
		return cmd_sigsafe();
	if (argc == 2 && strcmp(argv[1], "rem") == 0)
		return cmd_rem();
	if (argc == 2 && strcmp(argv[1], "short") == 0)
		return cmd_short();
	if (argc == 2 && strcmp(argv[1], "queue") == 0)
		return cmd_queue();
	if (argc == 2 && strcmp(argv[1], "eintr") == 0)
		return cmd_eintr();
	if (argc == 3 && strcmp(argv[1], "quota") == 0)
		return cmd_quota(atoi(argv[2]));
	fprintf(stderr, "usage: posixprog sigsafe|rem|short|queue|eintr|quota N\n");
	return 2;
}
