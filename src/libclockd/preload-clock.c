/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libclockd-preload.so: the read interposers (clock_gettime, clock_getres,
 * gettimeofday, time). */
#include <errno.h>
#include <sys/time.h>
#include <time.h>

#include "libclockd/preload.h"

/* CLOCK_TAI: CLOCKD_TAI, or the kernel's from a daemon that does not
 * publish the TAI offset (EINVAL: it is up, but has no such clock). */
static __attribute__((noinline)) int read_tai(struct timespec *ts)
{
	int err = errno;

	if (read_clock(CLOCK_TAI, CLOCKD_TAI, ts) == 0)
		return 0;
	if (errno != EINVAL)
		return -1;
	errno = err;
	return REAL(clock_gettime)(CLOCK_TAI, ts);
}

PRELOAD_EXPORT int clock_gettime(clockid_t id, struct timespec *ts)
{
	clockid_t c = map_read(id);

	if (__builtin_expect(c == CLOCKD_TAI, 0))
		return read_tai(ts);
	if (c)
		return read_clock(id, c, ts);
	return REAL(clock_gettime)(id, ts);
}

/* The resolution: clockd's while on clockd, else the kernel's. */
PRELOAD_EXPORT int clock_getres(clockid_t id, struct timespec *res)
{
	clockid_t c = map_read(id);
	int err;

	if (c && on_clockd()) {
		err = errno;
		if (clockd_clock_getres(c, res) == 0)
			return 0;
		if (!daemon_error(errno))
			return -1;
		errno = err;
	}
	return REAL(clock_getres)(id, res);
}

PRELOAD_EXPORT int gettimeofday(struct timeval *restrict tv, void *restrict tz)
{
	struct timespec ts;
	struct timeval *out = tv;

	/* Linux takes a NULL @tv; the header says it may not be, so that a
	 * plain test would be optimised away. */
	__asm__("" : "+r"(out));
	if (!out || read_clock(CLOCK_REALTIME, CLOCKD_REALTIME, &ts) != 0)
		return REAL(gettimeofday)(tv, tz);
	if (tz) {
		struct timeval junk;

		if (REAL(gettimeofday)(&junk, tz) != 0)
			return -1;
	}
	out->tv_sec = ts.tv_sec;
	out->tv_usec = ts.tv_nsec / 1000;
	return 0;
}

/* The kernel's time() is its coarse realtime (xtime) in seconds; so is
 * this one, from clockd's xtime. */
PRELOAD_EXPORT time_t time(time_t *t)
{
	struct timespec ts;

	if (read_clock(CLOCK_REALTIME_COARSE, CLOCKD_REALTIME_COARSE, &ts) != 0)
		return REAL(time)(t);
	if (t)
		*t = ts.tv_sec;
	return ts.tv_sec;
}
