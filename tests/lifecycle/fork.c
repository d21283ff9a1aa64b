/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fork() without exec (issue #26 item 7):
 *  1. a process arms a periodic 1 ms timer, forks a child that sleeps
 *     30 s, and exits: the daemon drops the parent's timers within 10 s
 *     (the child kept the parent's control socket open: they fired until
 *     the child exited);
 *  2. a clockd_fd() process with a 10 ms timer forks a child that arms a
 *     timer of its own (in the same mode: clockd_fd() keeps its number
 *     there, on an instance of its own) and never dispatches: the parent's
 *     loop does not spin (it shared the child's epoll instance: 1.35 M
 *     wake-ups in 3 s), and the child's timer is its own: pending there;
 *  3. the child of a thread-mode parent can use clockd_fd() (was EBUSY)
 *     and its timer fires through clockd_dispatch();
 *  4. the child has the forking thread's signal mask (the library holds
 *     its lock across fork(), with every signal blocked: a child left so
 *     passed the mask through exec, and a daemon it started never saw
 *     SIGTERM).
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <clockd/clockd.h>
#include "tests/libtimers/daemon.h"
#include "tests/tap.h"

#define NS 1000000000LL

static uint64_t fired;

static void on_fire(union sigval v)
{
	(void)v;
	__atomic_fetch_add(&fired, 1, __ATOMIC_RELAXED);
}

static int arm(clockd_timer_t *id, int notify, long period_ns)
{
	struct clockd_sigevent sev = { .notify = notify, .cpu = -1, .fn = on_fire };
	struct itimerspec v = { .it_value = { .tv_nsec = period_ns }, .it_interval = { .tv_nsec = period_ns } };

	if (clockd_timer_create(CLOCKD_MONOTONIC, &sev, id) < 0)
		return -1;
	return clockd_timer_settime(*id, 0, &v, NULL);
}

/* Whether the daemon has a client of @pid. */
static int has_client(pid_t pid)
{
	struct clockd_timer_client_stats st[128];
	int n = clockd_timer_client_stats(st, sizeof(st[0]), 128);

	for (int i = 0; i < n && i < 128; i++)
		if (st[i].pid == (uint32_t)pid)
			return 1;
	return n < 0 ? -1 : 0;
}

/* 1. The parent: arm, fork a sleeper, say the sleeper's pid, exit. */
static void exiting_parent(int wfd)
{
	clockd_timer_t id;
	pid_t kid;

	if (arm(&id, CLOCKD_SIGEV_THREAD_CPU, 1000000) < 0 || !td_wait_u64(&fired, 2, 30 * NS))
		_exit(1);
	kid = fork();
	if (kid == 0) {
		sleep(30);
		_exit(0);
	}
	if (write(wfd, &kid, sizeof(kid)) != sizeof(kid))
		_exit(1);
	_exit(0);
}

static double cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
	       ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) / 1e6;
}

/* 2. A clockd_fd() parent: exit status 0 if its loop stayed calm with a
 * non-dispatching child beside it; 2 if the child's own timer was not
 * pending there. */
static int fd_parent(void)
{
	int efd = clockd_fd(), st;
	uint64_t wakeups = 0;
	clockd_timer_t id;
	double c0;
	pid_t kid;

	if (efd < 0 || arm(&id, CLOCKD_SIGEV_THREAD_CPU, 10000000) < 0)
		return 1;
	kid = fork();
	if (kid == 0) {
		clockd_timer_t mine;
		struct itimerspec v;

		/* Its own timer, never dispatched; then it idles. */
		if (clockd_fd() != efd || arm(&mine, CLOCKD_SIGEV_THREAD_CPU, 1000000) < 0 ||
		    clockd_timer_gettime(mine, &v) < 0 || (v.it_value.tv_sec == 0 && v.it_value.tv_nsec == 0))
			_exit(2);
		sleep(5);
		_exit(0);
	}
	td_sleep(NS / 2); /* the child arms */
	c0 = cpu_s();
	for (int64_t end = td_now() + 2 * NS; td_now() < end;) {
		struct pollfd p = { .fd = efd, .events = POLLIN };

		if (poll(&p, 1, 100) > 0) {
			wakeups++;
			clockd_dispatch();
		}
	}
	printf("# fd parent: %llu wake-ups, %llu callbacks, %.3f s of CPU in 2 s\n", (unsigned long long)wakeups,
	       (unsigned long long)fired, cpu_s() - c0);
	fflush(stdout);
	kill(kid, SIGKILL);
	waitpid(kid, &st, 0);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 2)
		return 2;
	/* 100 expiries a second: a few hundred wake-ups, not millions. */
	return wakeups < 5000 && fired >= 20 && cpu_s() - c0 < 1.0 ? 0 : 1;
}

/* 3. A thread-mode parent's child uses clockd_fd(): 0 if its timer fired
 * through clockd_dispatch(); 2 if clockd_fd() failed (errno below 64
 * added). */
static int thread_parent(void)
{
	clockd_timer_t id;
	pid_t kid;
	int st;

	if (arm(&id, CLOCKD_SIGEV_THREAD_CPU, 10000000) < 0)
		return 1;
	kid = fork();
	if (kid == 0) {
		clockd_timer_t mine;
		int efd = clockd_fd();

		if (efd < 0)
			_exit(errno < 64 ? 64 + errno : 2);
		__atomic_store_n(&fired, 0, __ATOMIC_RELAXED);
		if (arm(&mine, CLOCKD_SIGEV_THREAD_CPU, 1000000) < 0)
			_exit(3);
		for (int64_t end = td_now() + 30 * NS; td_now() < end && fired < 5;) {
			struct pollfd p = { .fd = efd, .events = POLLIN };

			if (poll(&p, 1, 100) > 0)
				clockd_dispatch();
		}
		_exit(fired >= 5 ? 0 : 4);
	}
	waitpid(kid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 5;
}

/* After the library's fork handlers ran: 0 if the child's mask is the
 * parent's. */
static int same_mask(void)
{
	sigset_t before, after;
	clockd_timer_t id;
	pid_t kid;
	int st;

	if (arm(&id, CLOCKD_SIGEV_THREAD_CPU, 10000000) < 0)
		return 1;
	pthread_sigmask(SIG_SETMASK, NULL, &before);
	kid = fork();
	if (kid == 0) {
		pthread_sigmask(SIG_SETMASK, NULL, &after);
		for (int sig = 1; sig < 32; sig++)
			if (sigismember(&before, sig) != sigismember(&after, sig))
				_exit(10 + sig);
		_exit(0);
	}
	waitpid(kid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 5;
}

static int run(int (*fn)(void))
{
	pid_t p = fork();
	int st;

	if (p == 0)
		_exit(fn());
	waitpid(p, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 100;
}

int main(void)
{
	int pfd[2], gone = 0, rc;
	pid_t parent, sleeper = 0;

	td_init();
	td_start(NULL);
	tap_plan(5);
	if (pipe(pfd) < 0)
		tap_bail("pipe: %s", strerror(errno));
	parent = fork();
	if (parent == 0) {
		close(pfd[0]);
		exiting_parent(pfd[1]);
	}
	close(pfd[1]);
	if (read(pfd[0], &sleeper, sizeof(sleeper)) != sizeof(sleeper))
		tap_bail("the parent failed to arm and fork");
	waitpid(parent, &rc, 0);
	for (int64_t end = td_now() + 10 * NS; td_now() < end;) {
		if (has_client(parent) == 0) {
			gone = 1;
			break;
		}
		td_sleep(NS / 20);
	}
	tap_ok(gone, "the daemon drops the timers of a parent that exited, its forked child still alive");
	kill(sleeper, SIGKILL);
	rc = run(fd_parent);
	tap_ok(rc != 2, "a clockd_fd() parent's child arms a timer of its own (%d)", rc);
	tap_ok(rc == 0, "... and the parent's loop does not spin meanwhile (%d)", rc);
	rc = run(thread_parent);
	tap_ok(rc == 0, "the child of a thread-mode parent gets clockd_fd() and its timer fires (%d%s%s)", rc,
	       rc > 64 ? ": " : "", rc > 64 ? strerror(rc - 64) : "");
	rc = run(same_mask);
	tap_ok(rc == 0, "the child of a process with timers has its parent's signal mask (%d%s)", rc,
	       rc > 10 ? ": a signal blocked or unblocked" : "");
	td_stop(SIGTERM);
	return tap_done();
}
