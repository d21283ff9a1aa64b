/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The connection's life: with no daemon a timer call fails with
 * ECONNREFUSED or ENOENT; once a daemon runs it works; when the daemon is
 * killed and none comes back within the reconnect timeout (set short
 * here: tests/libtimers/restart has the daemon come back), pending timers
 * stop being pending (their callbacks do not run), the next arming call
 * fails with ECONNRESET, and once a daemon is back the call after
 * connects again and its timer runs.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>

#include <clockd/clockd.h>
#include "tests/libtimers/daemon.h"
#include "tests/tap.h"

#define WAIT_NS 10000000000LL

static uint64_t fired;

static void count(struct clockd_timer *t, void *arg)
{
	(void)t;
	(void)arg;
	__atomic_fetch_add(&fired, 1, __ATOMIC_RELEASE);
}

int main(void)
{
	struct clockd_timer t, far;
	int64_t end;
	int r, err = 0;

	td_init();
	clockd_set_reconnect_timeout(100);
	clockd_timer_setup(&t, count, NULL);
	clockd_timer_setup(&far, count, NULL);
	/* A first daemon, to know it comes up with its socket. */
	td_start(NULL);
	td_stop(SIGTERM);
	tap_plan(7);

	r = clockd_add_timer(&t, 1);
	err = errno;
	tap_ok(r == -1 && (err == ECONNREFUSED || err == ENOENT), "no daemon: %d (%s)", r, strerror(err));

	td_start(NULL);
	r = clockd_add_timer(&t, clockd_get_jiffies_64() + 1);
	tap_ok(r == 0 && td_wait_u64(&fired, 1, WAIT_NS), "a daemon: the timer ran");
	tap_ok(clockd_add_timer(&far, clockd_get_jiffies_64() + 1000000) == 0 && clockd_timer_pending(&far),
	       "a far timer pending");

	td_stop(SIGKILL);
	end = td_now() + WAIT_NS;
	while (clockd_timer_pending(&far) && td_now() < end)
		td_sleep(1000000);
	tap_ok(!clockd_timer_pending(&far), "daemon killed: the far timer is not pending any more");
	r = clockd_add_timer(&t, clockd_get_jiffies_64() + 1);
	err = errno;
	tap_ok(r == -1 && err == ECONNRESET, "the next arming call: %d (%s)", r, strerror(err));

	td_start(NULL);
	fired = 0;
	r = clockd_add_timer(&t, clockd_get_jiffies_64() + 1);
	err = errno;
	bool ran = r == 0 && td_wait_u64(&fired, 1, WAIT_NS);

	tap_ok(ran, "a new daemon: the next call connects, the timer ran (%d, %s; fired %llu, pending %d)", r,
	       r ? strerror(err) : "-", (unsigned long long)fired, clockd_timer_pending(&t));
	tap_ok(clockd_del_timer_sync(&far) == 0, "the timer of the old daemon stays not pending");
	return tap_done();
}
