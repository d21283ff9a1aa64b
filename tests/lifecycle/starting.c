/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A relative POSIX-style timer armed while the daemon is starting: its
 * control socket is bound before its page is live, so a program started
 * beside it (a unit ordered After= it, a script waiting for the socket)
 * can arm then. clockd_timer_settime() read CLOCKD_MONOTONIC first and
 * failed with ESTALE or ENOENT (3 of 5 runs), errors timer_settime does
 * not have; it now connects first, and the daemon answers once its page
 * is live. The daemon is stopped (SIGSTOP) as soon as its socket file is
 * there, the arm is made in a thread, and the daemon goes on 300 ms later.
 * On a machine loaded enough that the daemon then takes longer than the
 * library's 5 s wait for an answer, the arm fails with EAGAIN after that
 * wait, as documented; never with the page's errors.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <clockd/clockd.h>
#include "tests/libtimers/daemon.h"
#include "tests/tap.h"

#define NS 1000000000LL

static clockd_timer_t timer;
static uint64_t fired;
static int create_err, settime_err;
static int64_t settime_ns; /* how long clockd_timer_settime() took */

static void fn(union sigval v)
{
	(void)v;
	__atomic_add_fetch(&fired, 1, __ATOMIC_RELEASE);
}

static void *arm(void *arg)
{
	struct clockd_sigevent sev = { .notify = CLOCKD_SIGEV_THREAD_CPU, .cpu = -1, .fn = fn };
	struct itimerspec its = { .it_value = { 0, 10000000 } };

	(void)arg;
	int64_t t0;

	if (clockd_timer_create(CLOCKD_MONOTONIC, &sev, &timer) < 0) {
		create_err = errno;
		return NULL;
	}
	t0 = td_now();
	if (clockd_timer_settime(timer, 0, &its, NULL) < 0)
		settime_err = errno;
	settime_ns = td_now() - t0;
	return NULL;
}

int main(void)
{
	pthread_t th;
	bool up, late;

	td_init();
	tap_plan(3);
	td_start_stopped(NULL);
	if (pthread_create(&th, NULL, arm, NULL) != 0)
		tap_bail("pthread_create");
	td_sleep(NS * 3 / 10);
	td_signal(SIGCONT);
	pthread_join(th, NULL);
	tap_ok(create_err == 0, "clockd_timer_create while the daemon starts: %s",
	       create_err ? strerror(create_err) : "ok");
	/* EAGAIN only as the end of the library's 5 s wait for the daemon. */
	late = settime_err == EAGAIN && settime_ns >= 4900 * (NS / 1000000);
	tap_ok(create_err == 0 && (settime_err == 0 || late),
	       "a relative clockd_timer_settime while it starts: %s after %.2f s%s",
	       settime_err ? strerror(settime_err) : "ok", (double)settime_ns / NS,
	       late ? " (the daemon took longer than the library waits)" : "");
	up = late || (settime_err == 0 && td_wait_u64(&fired, 1, 10 * NS));
	tap_ok(up, "the timer fired once the daemon was up (%llu)%s",
	       (unsigned long long)__atomic_load_n(&fired, __ATOMIC_ACQUIRE), late ? ", not armed: EAGAIN" : "");
	if (create_err == 0)
		clockd_timer_delete(timer);
	td_stop(SIGTERM);
	return tap_done();
}
