/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libclockd-preload.so: LD_PRELOAD it and an unmodified, dynamically
 * linked program reads clockd's clocks where it asks for the kernel's.
 *
 * What is served (see libclockd-preload(8) for the whole contract):
 *   reads (clock_gettime, clock_getres, gettimeofday, time):
 *     CLOCK_REALTIME, CLOCK_MONOTONIC, CLOCK_MONOTONIC_RAW and the two
 *     COARSE clocks, each by the clockd clock of the same kind;
 *   sleeps (clock_nanosleep, nanosleep) and POSIX timers (timer_*):
 *     CLOCK_REALTIME and CLOCK_MONOTONIC (the clocks clockd sleeps and
 *     expires timers on; the kernel refuses sleeps on the others anyway).
 * Every other clock (BOOTTIME: clockd has no clock that counts suspend;
 * the CPU-time and fd clocks) goes to libc untouched.
 *
 * The library carries its own copy of libclockd, linked with
 * --wrap=clock_gettime and friends: its calls to the kernel's clocks (the
 * fallbacks, the kernel sleeps under clockd_clock_nanosleep, the page's
 * retry clock) reach __wrap_*() below and so libc, never the interposers
 * (which would turn "the kernel's CLOCK_MONOTONIC" into clockd's and, on
 * a failure, recurse). Nothing of that copy is exported (preload.sym).
 *
 * Whether the process starts on clockd is decided once, at the first call
 * or in the constructor, whichever comes first; a process that starts
 * without a live daemon stays on the kernel's clocks. A process on clockd
 * whose read fails (the daemon stopped past the page's stale limit,
 * killed, restarting) is served by the kernel for that call and the
 * following ones, and comes back to clockd when its page reads again
 * (looked at every 10 ms while away, never on the hot path). No monotonic
 * clock goes back across a switch, either way; see "switching" in
 * preload-mode.c. preload.h lists the files.
 */
#include <sys/syscall.h>
#include <unistd.h>

#include "libclockd/preload.h"

/* ---- the real functions ---------------------------------------------- */

/* Looked up once (dlsym is not cheap), in the constructor or at the first
 * call that needs them (lookup()); a racing second lookup stores the same
 * value. */
struct real_fns preload_real;

void lookup_all(void)
{
	(void)REAL(clock_gettime);
	(void)REAL(clock_getres);
	(void)REAL(clock_nanosleep);
	(void)REAL(nanosleep);
	(void)REAL(gettimeofday);
	(void)REAL(time);
	(void)REAL(timer_create);
	(void)REAL(timer_settime);
	(void)REAL(timer_gettime);
	(void)REAL(timer_getoverrun);
	(void)REAL(timer_delete);
}

/* The kernel's clocks for libclockd's own code (see the top). The system
 * calls are the last resort of a libc without the symbol. */

int __wrap_clock_gettime(clockid_t id, struct timespec *ts)
{
	__typeof__(preload_real.clock_gettime) f = REAL(clock_gettime);

	return f ? f(id, ts) : (int)syscall(SYS_clock_gettime, id, ts);
}

int __wrap_clock_getres(clockid_t id, struct timespec *res)
{
	__typeof__(preload_real.clock_getres) f = REAL(clock_getres);

	return f ? f(id, res) : (int)syscall(SYS_clock_getres, id, res);
}

int __wrap_clock_nanosleep(clockid_t id, int flags, const struct timespec *req, struct timespec *rem)
{
	__typeof__(preload_real.clock_nanosleep) f = REAL(clock_nanosleep);

	if (f)
		return f(id, flags, req, rem);
	return syscall(SYS_clock_nanosleep, id, flags, req, rem) == 0 ? 0 : errno;
}
