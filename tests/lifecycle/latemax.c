/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * clockctl timers' "late max" (issue #26 item 11): a timer armed for an
 * absolute CLOCKD_REALTIME long past (second 1e9, 2001) runs at once; the
 * base's lateness statistics count it late from the arm, not from 2001
 * (they showed 759384032 s). clockd_timer_cpu_stats() is what clockctl
 * timers prints.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

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

int main(void)
{
	struct clockd_sigevent sev = { .notify = CLOCKD_SIGEV_THREAD_CPU, .cpu = -1, .fn = on_fire };
	struct itimerspec past = { .it_value = { .tv_sec = 1000000000 } };
	struct clockd_timer_cpu_stats st[64];
	clockd_timer_t id;
	uint64_t max = 0;
	int n;

	td_init();
	td_start(NULL);
	tap_plan(3);
	if (clockd_timer_create(CLOCKD_REALTIME, &sev, &id) < 0)
		tap_bail("clockd_timer_create: %s", strerror(errno));
	tap_ok(clockd_timer_settime(id, TIMER_ABSTIME, &past, NULL) == 0 &&
		       td_wait_u64(&fired, 1, 30 * NS),
	       "a CLOCKD_REALTIME timer armed for second 1e9 runs at once");
	n = clockd_timer_cpu_stats(st, sizeof(st[0]), 64);
	tap_ok(n > 0, "the bases' statistics are read (%d bases)", n);
	for (int i = 0; i < n && i < 64; i++)
		if (st[i].late_max_ns > max)
			max = st[i].late_max_ns;
	/* Late from its arm: a loaded machine may take seconds, not years. */
	tap_ok(max < 30 * (uint64_t)NS, "late max %.1f us: from the arm, not from 2001", (double)max / 1e3);
	clockd_timer_delete(id);
	td_stop(15);
	return tap_done();
}
