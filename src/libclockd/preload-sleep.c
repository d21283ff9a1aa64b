/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libclockd-preload.so: the sleep interposers (clock_nanosleep, nanosleep). */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>

#include "libclockd/preload.h"
#include "shared/tickmath.h"


/*
 * A sleep until @t on the process's clock @id (CLOCK_MONOTONIC, or
 * CLOCK_REALTIME for an absolute sleep), whichever source serves it: on
 * clockd, clockd's sleep (the process's clock is never behind clockd's, so
 * that is never short); away, the kernel's, for what is left on the
 * process's clock. Each round reads the clock again, so a sleep across a
 * switch never ends early. 0 or an errno; EINTR with the time left in
 * *@left.
 */
static int sleep_until(clockid_t id, int64_t t, int64_t *left)
{
	clockid_t c = map_sleep(id);
	struct timespec now, ts;
	int m, err;

	for (;;) {
		if (read_clock(id, c, &now) != 0)
			return errno;
		*left = t - ts_to_ns(&now);
		if (*left <= 0)
			return 0;
		m = current_mode();
		if (m == MODE_CLOCKD || m == MODE_RETURNING) {
			ts = ns_to_ts(t);
			err = clockd_clock_nanosleep(c, TIMER_ABSTIME, &ts, NULL);
			if (err == EINTR)
				break;
			if (!daemon_error(err) && err != 0)
				return err;
			if (err)
				go_away(m, err);
			continue;
		}
		if (m == MODE_SWITCHING && !preload_holds_mode()) {
			sched_yield();
			continue;
		}
		/* Away the process's realtime is the kernel's; its monotonic
		 * clock runs at the kernel's rate. */
		if (id == CLOCK_REALTIME) {
			ts = ns_to_ts(t);
			err = REAL(clock_nanosleep)(CLOCK_REALTIME, TIMER_ABSTIME, &ts, NULL);
		} else {
			ts = ns_to_ts(*left);
			err = REAL(clock_nanosleep)(CLOCK_MONOTONIC, 0, &ts, NULL);
		}
		if (err == EINTR)
			break;
		if (err)
			return err;
	}
	/* Interrupted: what is left, on the process's clock. */
	if (read_clock(id, c, &now) == 0)
		*left = t - ts_to_ns(&now);
	if (*left < 0)
		*left = 0;
	return EINTR;
}

/* A relative sleep, or a clockd sleep that failed (the daemon went away
 * under it, or was away): the rest on whichever clock serves the process
 * now. A relative sleep runs to the process's clock now + its span (one
 * that failed starts again from now: longer, never shorter). */
static int sleep_away(clockid_t id, int flags, const struct timespec *req, struct timespec *rem)
{
	struct timespec now;
	int64_t t, left = 0;
	int err;

	if (!req)
		return EFAULT;
	if (req->tv_nsec < 0 || req->tv_nsec >= (long)NSEC_PER_SEC || req->tv_sec < 0 || (flags & ~TIMER_ABSTIME))
		return EINVAL;
	if (flags & TIMER_ABSTIME)
		return sleep_until(id, ts_to_ns(req), &left);
	if (read_clock(CLOCK_MONOTONIC, CLOCKD_MONOTONIC, &now) != 0)
		return errno;
	t = ts_to_ns(&now) + ts_to_ns(req);
	err = sleep_until(CLOCK_MONOTONIC, t, &left);
	if (err == EINTR && rem)
		*rem = ns_to_ts(left);
	return err;
}

PRELOAD_EXPORT int clock_nanosleep(clockid_t id, int flags, const struct timespec *req,
				   struct timespec *rem)
{
	clockid_t c = map_sleep(id);
	int m, err;

	if (!c)
		return REAL(clock_nanosleep)(id, flags, req, rem);
	m = current_mode();
	if (m == MODE_KERNEL)
		return REAL(clock_nanosleep)(id, flags, req, rem);
	/* A relative sleep is measured on the process's clock, which after a
	 * return to clockd may stand ahead of clockd's (the clamp): sleeping
	 * the span on clockd's clock would end short by that much. So it is
	 * an absolute sleep to the process's now + span (sleep_until). */
	if (!(flags & TIMER_ABSTIME))
		return sleep_away(id, flags, req, rem);
	if (m == MODE_CLOCKD || m == MODE_RETURNING) {
		err = clockd_clock_nanosleep(c, flags, req, rem);
		if (!daemon_error(err))
			return err;
		go_away(m, err);
	}
	return sleep_away(id, flags, req, rem);
}

/* Linux measures nanosleep() on CLOCK_MONOTONIC; so does this. */
PRELOAD_EXPORT int nanosleep(const struct timespec *req, struct timespec *rem)
{
	int err = clock_nanosleep(CLOCK_MONOTONIC, 0, req, rem);

	if (err == 0)
		return 0;
	errno = err;
	return -1;
}
