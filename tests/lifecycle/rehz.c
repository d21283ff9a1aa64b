/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A restart with another configuration (issue #26 item 10):
 *  1. a jiffies timer 3 s ahead, armed at HZ 1000, fires about 3 s after
 *     it was armed when the daemon comes back at HZ 100, and again at
 *     HZ 10000 (it fired after 26.2 s and 0.864 s): never early, and not
 *     more than a loaded machine's seconds late;
 *  2. a timer pinned to CPU 1 (clockd_add_timer_on) when the restarted
 *     daemon serves only CPU 0 (timer_cpus 0) is failed visibly: not
 *     pending, its callback never runs (it ran on CPU 0), and its next
 *     call says ENXIO.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <clockd/clockd.h>
#include "tests/libtimers/daemon.h"
#include "tests/tap.h"

#define NS 1000000000LL

static uint64_t ran;
static int64_t ran_at;
static int ran_cpu = -1;

static void on_fire(struct clockd_timer *t, void *arg)
{
	(void)t;
	(void)arg;
	__atomic_store_n(&ran_at, td_now(), __ATOMIC_RELAXED);
	__atomic_store_n(&ran_cpu, sched_getcpu(), __ATOMIC_RELAXED);
	__atomic_fetch_add(&ran, 1, __ATOMIC_RELEASE);
}

/* Arm 3 s ahead at HZ 1000, restart at @hz: seconds until it ran (-1:
 * not within 20 s). */
static double across(const char *hz)
{
	static const char *const a[] = { "hz=1000", NULL };
	const char *b[] = { hz, NULL };
	struct clockd_timer t;
	int64_t t0;
	uint64_t want = __atomic_load_n(&ran, __ATOMIC_ACQUIRE) + 1;

	td_start(a);
	clockd_timer_setup(&t, on_fire, NULL);
	t0 = td_now();
	if (clockd_add_timer(&t, clockd_get_jiffies_64() + 3000) < 0)
		tap_bail("clockd_add_timer: %s", strerror(errno));
	td_sleep(NS / 2);
	td_stop(SIGKILL);
	td_start(b);
	if (!td_wait_u64(&ran, want, 20 * NS)) {
		clockd_del_timer_sync(&t);
		td_stop(SIGTERM);
		return -1;
	}
	td_stop(SIGTERM);
	return (double)(__atomic_load_n(&ran_at, __ATOMIC_RELAXED) - t0) / 1e9;
}

int main(void)
{
	static const char *const only0[] = { "timer_cpus=0", NULL };
	struct clockd_timer t;
	double s;
	int r, err;

	td_init();
	clockd_set_reconnect_timeout(60000);
	tap_plan(5);
	s = across("hz=100");
	tap_ok(s >= 2.99 && s < 8, "a 3 s jiffies timer armed at HZ 1000 runs after %.3f s at HZ 100", s);
	s = across("hz=10000");
	tap_ok(s >= 2.99 && s < 8, "... and after %.3f s at HZ 10000", s);

	if (!(td_cpus() & 2)) {
		tap_skip("no CPU 1 to pin to here");
		tap_skip("no CPU 1 to pin to here");
		tap_skip("no CPU 1 to pin to here");
		return tap_done();
	}
	td_start(NULL);
	clockd_timer_setup(&t, on_fire, NULL);
	__atomic_store_n(&ran, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&ran_cpu, -1, __ATOMIC_RELAXED);
	if (clockd_add_timer_on(&t, clockd_get_jiffies_64() + 2000, 1) < 0)
		tap_bail("clockd_add_timer_on: %s", strerror(errno));
	td_sleep(NS / 2);
	td_stop(SIGKILL);
	td_start(only0);
	/* Reconnected, and past its expiry. */
	td_sleep(4 * NS);
	tap_ok(__atomic_load_n(&ran, __ATOMIC_ACQUIRE) == 0,
	       "a timer pinned to CPU 1 does not run when the daemon no longer serves CPU 1 (ran: on CPU %d, -1: not at all)",
	       __atomic_load_n(&ran_cpu, __ATOMIC_RELAXED));
	tap_ok(clockd_timer_pending(&t) == 0, "... it is not pending");
	r = clockd_mod_timer(&t, clockd_get_jiffies_64() + 1000);
	err = errno;
	tap_ok(r < 0 && err == ENXIO, "... and its next call says ENXIO (%s)", r < 0 ? strerror(err) : "armed");
	clockd_del_timer_sync(&t);
	td_stop(SIGTERM);
	return tap_done();
}
