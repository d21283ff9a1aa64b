/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Quotas count timers actually armed (issue #26 item 6):
 *  1. with the defaults, max_clients_per_user (32) processes of one uid
 *     each arm a timer and see it fire (each HELLO reserved 65536 of the
 *     262144 of max_timers_per_user: the 5th got EDQUOT);
 *  2. max_timers_per_user 50, client_max_timers 40: a client holds 40;
 *     another arms 10, and its 11th timer_create fails with EAGAIN, at
 *     once, where POSIX has it (the id is reserved at the create), never
 *     EDQUOT: no call returned 0 for a timer the daemon then refused; a
 *     timer deleted gives its id back to the next create;
 *  3. a restart: the holder of 40 is stopped (SIGSTOP) while the daemon
 *     is killed and started again, a newcomer fills the user's 50, then
 *     the holder continues and reconnects: its 40 timers stay pending
 *     (its re-arms are let past the limit just after the start).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <clockd/clockd.h>
#include "tests/libtimers/daemon.h"
#include "tests/tap.h"

#define NS 1000000000LL
#define CLIENTS 32

static uint64_t fired;

static void on_fire(union sigval v)
{
	(void)v;
	__atomic_fetch_add(&fired, 1, __ATOMIC_RELAXED);
}

/* Child: arm a 1 ms timer, wait for it: 0, or the errno (100: no fire). */
static int child_fire(void)
{
	struct clockd_sigevent sev = { .notify = CLOCKD_SIGEV_THREAD_CPU, .cpu = -1, .fn = on_fire };
	struct itimerspec v = { .it_value = { .tv_nsec = 1000000 } };
	clockd_timer_t id;

	if (clockd_timer_create(CLOCKD_MONOTONIC, &sev, &id) < 0)
		return errno;
	/* EAGAIN is for trying again: a connection the daemon has not yet
	 * seen closed (td_start's probe) may count for a moment. */
	for (int tries = 0; clockd_timer_settime(id, 0, &v, NULL) < 0; tries++) {
		if (errno != EAGAIN || tries == 100)
			return errno;
		td_sleep(NS / 10);
	}
	return td_wait_u64(&fired, 1, 60 * NS) ? 0 : 100;
}

static const char *failed_call; /* arm_hour's: "create", "settime" */

/* Arm @n SIGEV_NONE timers an hour away into @ids: how many were armed
 * (*err: the errno of the first failure, failed_call its call). */
static int arm_hour(clockd_timer_t *ids, int n, int *err)
{
	struct clockd_sigevent sev = { .notify = CLOCKD_SIGEV_NONE, .cpu = -1 };
	struct itimerspec v = { .it_value = { .tv_sec = 3600 } };
	int i;

	*err = 0;
	failed_call = "none";
	for (i = 0; i < n; i++) {
		if (clockd_timer_create(CLOCKD_MONOTONIC, &sev, &ids[i]) < 0) {
			*err = errno;
			failed_call = "create";
			break;
		}
		if (clockd_timer_settime(ids[i], 0, &v, NULL) < 0) {
			*err = errno;
			failed_call = "settime";
			clockd_timer_delete(ids[i]); /* not counted: the caller never deletes it */
			break;
		}
	}
	return i;
}

/* The errno the daemon's answer to @id's ARM gave (0: still pending after
 * @wait_ns, as far as the timer can tell). */
static int settled(clockd_timer_t id, int64_t wait_ns)
{
	struct itimerspec v;
	int64_t end = td_now() + wait_ns;

	do {
		if (clockd_timer_gettime(id, &v) < 0)
			return errno;
		if (v.it_value.tv_sec == 0 && v.it_value.tv_nsec == 0)
			return -1; /* not pending, no error */
		td_sleep(20000000);
	} while (td_now() < end);
	return 0;
}

/* Child holding 40: arm them, say so on @wfd, then on each byte read
 * from @rfd report how many of them are still pending (one byte). */
static void holder(int rfd, int wfd)
{
	clockd_timer_t ids[40];
	int err, n = arm_hour(ids, 40, &err);
	unsigned char c = (unsigned char)n;

	clockd_set_reconnect_timeout(120000);
	if (write(wfd, &c, 1) != 1)
		_exit(1);
	while (read(rfd, &c, 1) == 1) {
		int pending = 0;

		if (c == 'c') {
			for (int i = 0; i < n; i++)
				clockd_timer_delete(ids[i]);
			n = 0;
		}
		/* Give a re-arm's answer time to come back. */
		td_sleep(500000000);
		for (int i = 0; i < n; i++) {
			struct itimerspec v;

			pending += clockd_timer_gettime(ids[i], &v) == 0 && v.it_value.tv_sec > 0;
		}
		c = (unsigned char)pending;
		if (write(wfd, &c, 1) != 1)
			_exit(1);
	}
	_exit(0);
}

static int ask(int wfd, int rfd, char what)
{
	unsigned char c;

	if (write(wfd, &what, 1) != 1 || read(rfd, &c, 1) != 1)
		return -1;
	return c;
}

int main(void)
{
	static const char *const small[] = { "max_timers_per_user=50", "client_max_timers=40", NULL };
	pid_t pids[CLIENTS], hp;
	int ok = 0, edquot = 0, other = 0, to_h[2], from_h[2], err, n;
	clockd_timer_t ids[50];
	unsigned char c;

	td_init();
	tap_plan(8);

	/* 1. defaults */
	td_start(NULL);
	for (int i = 0; i < CLIENTS; i++) {
		pids[i] = fork();
		if (pids[i] == 0)
			_exit(child_fire());
	}
	for (int i = 0; i < CLIENTS; i++) {
		int st, rc;

		waitpid(pids[i], &st, 0);
		rc = WIFEXITED(st) ? WEXITSTATUS(st) : 101;
		ok += rc == 0;
		edquot += rc == EDQUOT;
		if (rc != 0 && rc != EDQUOT) {
			other++;
			tap_diag("client %d: %s", i, rc == 100 ? "armed, never fired in 60 s" : rc == 101 ? "killed"
						 : strerror(rc));
		}
	}
	tap_ok(ok == CLIENTS, "defaults: %d processes of one uid each armed a timer that fired (%d of %d; "
	       "%d EDQUOT, %d other)", CLIENTS, ok, CLIENTS, edquot, other);
	td_stop(SIGTERM);

	/* 2. the per-user limit counts armed timers */
	td_start(small);
	if (pipe2(to_h, O_CLOEXEC) < 0 || pipe2(from_h, O_CLOEXEC) < 0)
		tap_bail("pipe: %s", strerror(errno));
	hp = fork();
	if (hp == 0) {
		close(to_h[1]);
		close(from_h[0]);
		holder(to_h[0], from_h[1]);
	}
	close(to_h[0]);
	close(from_h[1]);
	if (read(from_h[0], &c, 1) != 1)
		tap_bail("the holder died");
	tap_ok(c == 40 && ask(to_h[1], from_h[0], '?') == 40, "a client arms its 40 (client_max_timers)");
	n = arm_hour(ids, 11, &err);
	tap_ok(n == 10 && err == EAGAIN && strcmp(failed_call, "create") == 0,
	       "another arms 10; its 11th timer_create, past max_timers_per_user 50, fails with EAGAIN at once "
	       "(%d armed, then %s: %s)", n, failed_call, err ? strerror(err) : "no failure");
	{
		int bad = 0;

		for (int i = 0; i < n; i++)
			bad += settled(ids[i], i == n - 1 ? NS / 2 : 0) != 0;
		tap_ok(bad == 0, "... and its 10 stay pending: none was refused after its call returned 0 (%d were)",
		       bad);
	}
	clockd_timer_delete(ids[--n]);
	n += arm_hour(ids + n, 1, &err);
	tap_ok(n == 10 && err == 0, "a timer deleted gives its id back: the next create and arm succeed (%s)",
	       err ? strerror(err) : "ok");
	/* 3. a restart: the holder stopped meanwhile; a newcomer (us) fills
	 * the user's 50 first. */
	for (int i = 0; i < n; i++)
		clockd_timer_delete(ids[i]);
	kill(hp, SIGSTOP);
	td_stop(SIGKILL);
	td_absorb_reset();
	td_start(small);
	n = arm_hour(ids, 50, &err);
	tap_ok(n == 40, "after the restart a newcomer arms its 40 ids' worth (%d)", n);
	kill(hp, SIGCONT);
	{
		int kept = 0;
		int64_t end = td_now() + 30 * NS;

		while ((kept = ask(to_h[1], from_h[0], '?')) >= 0 && kept < 40 && td_now() < end)
			;
		tap_ok(kept == 40, "the client that reconnects keeps its 40 pending timers (%d)", kept);
	}
	for (int i = 0; i < n; i++)
		clockd_timer_delete(ids[i]);
	n = ask(to_h[1], from_h[0], 'c');
	tap_ok(n == 0, "the holder cancels them all");
	close(to_h[1]);
	waitpid(hp, NULL, 0);
	td_stop(SIGTERM);
	return tap_done();
}
