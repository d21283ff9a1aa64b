/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * clockd_clock_nanosleep() and the busy-wait delays.
 *
 * A clockd clock may run at a rate other than the kernel's (disciplined,
 * or driven by a device), so a sleep cannot be handed to the kernel whole.
 * Each round reads the clockd clock, sleeps on the kernel's CLOCK_MONOTONIC
 * for a little less than what is left (scaled by the rate seen in the
 * previous round), and reads again; the last stretch, shorter than a
 * wake-up costs, is spun on the clock itself (if its resolution is fine). So the sleep never ends
 * before the target on the clockd clock, and ends within about one clock
 * read after it when the CPU is free. Signals are blocked between the
 * rounds and let in only while waiting (sleep_masked()), so a caught
 * signal always ends the sleep with EINTR.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "libclockd/internal.h"
#include "shared/tickmath.h"

/* Below this much time left, spin rather than sleep: a wake-up costs tens
 * of microseconds on a virtual machine, and may come that late. */
#define SPIN_NS 50000
/* The first round sleeps this fraction short (1/64: clocks up to 1.5 %
 * faster than the kernel's end it early, never late), later rounds use
 * the rate they measured, with the same margin. */
#define MARGIN_SHIFT 6
/* A round on a realtime clock sleeps at most this long, so that a step of
 * the clock (forward: the target comes sooner) is seen. */
#define REALTIME_ROUND_NS 100000000
/* A clock of coarser resolution than this is not spun on: it would spin
 * up to a tick (the coarse clocks, and the fine ones when this CPU cannot
 * read the daemon's counter). */
#define FINE_RES_NS 1000

static bool is_clockd_clock(clockid_t id)
{
	return (uint32_t)(id - CLOCKD_CLOCK_BASE) < CLOCKD_CLOCK_COUNT;
}

static bool is_realtime(clockid_t id)
{
	return id == CLOCKD_REALTIME || id == CLOCKD_REALTIME_COARSE || id == CLOCKD_TAI;
}

/* The clockd clock @id in ns, or a positive errno. */
static int read_ns(clockid_t id, int64_t *ns)
{
	struct timespec ts;

	if (clockd_clock_gettime(id, &ts) != 0)
		return errno;
	*ns = ts_to_ns(&ts);
	return 0;
}

static bool timespec_valid(const struct timespec *ts)
{
	return ts->tv_nsec >= 0 && ts->tv_nsec < (long)NSEC_PER_SEC && ts->tv_sec >= 0;
}

static int64_t sat_add(int64_t a, int64_t b)
{
	return a > INT64_MAX - b ? INT64_MAX : a + b;
}

/* How long to sleep on the kernel clock for @left ns of the clockd clock
 * @id of resolution @res, given @rate (clockd ns per kernel ns, as last
 * measured). */
static int64_t kernel_round(clockid_t id, int64_t left, int64_t res, double rate)
{
	double k = (double)left / rate;
	int64_t whole = k >= 9e18 ? INT64_MAX / 2 : (int64_t)k + 1;
	int64_t round = whole - (whole >> MARGIN_SHIFT);

	/* A clock that moves in steps reads up to a step behind: the margin
	 * would only add rounds. */
	if (res > FINE_RES_NS && round < res)
		round = whole;
	if (is_realtime(id) && round > REALTIME_ROUND_NS)
		round = REALTIME_ROUND_NS;
	return round;
}

/* A signal is pending that @mask (the caller's) does not block. */
static bool signal_waiting(const sigset_t *mask)
{
	sigset_t pend;

	if (sigpending(&pend) != 0)
		return false;
	for (int sig = 1; sig < NSIG; sig++)
		if (sigismember(&pend, sig) == 1 && sigismember(mask, sig) != 1)
			return true;
	return false;
}

/* Wait @ns on the kernel's CLOCK_MONOTONIC with the caller's signal mask
 * @mask: 0, or EINTR when a handler ran. */
static int kernel_wait(int64_t ns, const sigset_t *mask)
{
	struct timespec rel = ns_to_ts(ns < 0 ? 0 : ns);

	return ppoll(NULL, 0, &rel, mask) < 0 ? errno : 0;
}

/*
 * Sleep on the clockd clock @id until it reads @target ns. 0, EINTR, or a
 * read error; *@left is what remained when it stopped. Called with every
 * signal blocked, @mask the caller's own: a signal that comes between two
 * rounds or while spinning stays pending until the next wait, which
 * ppoll() makes with @mask, atomically, as pselect() does; so it ends the
 * sleep, as POSIX has a signal caught during the sleep do, instead of
 * running its handler and sleeping on.
 */
static int sleep_masked(clockid_t id, int64_t target, int64_t *left, const sigset_t *mask)
{
	double rate = 1.0;
	int64_t now = 0, k0, c0, k1, res;
	struct timespec r;
	int err;

	res = clockd_clock_getres(id, &r) == 0 ? ts_to_ns(&r) : (int64_t)NSEC_PER_SEC;
	err = read_ns(id, &now);
	for (;;) {
		int64_t round;

		if (err)
			return err;
		*left = target - now;
		if (*left <= 0)
			return 0;
		if (*left <= SPIN_NS && res <= FINE_RES_NS) {
			/* A signal that came meanwhile: delivered now, by a
			 * wait of zero. */
			if (signal_waiting(mask) && (err = kernel_wait(0, mask)) != 0)
				return err;
			err = read_ns(id, &now);
			continue;
		}
		round = kernel_round(id, *left, res, rate);
		k0 = kclock_ns(CLOCK_MONOTONIC);
		c0 = now;
		err = kernel_wait(round, mask);
		if (err == EINTR) {
			if (read_ns(id, &now) == 0)
				*left = target - now > 0 ? target - now : 0;
			return EINTR;
		}
		if (err)
			return err;
		err = read_ns(id, &now);
		k1 = kclock_ns(CLOCK_MONOTONIC);
		/* Learn the rate from a round long enough to measure it (a
		 * tenth of a percent of a millisecond is a microsecond). */
		if (!err && k1 - k0 >= 1000000 && now > c0 && res <= FINE_RES_NS) {
			double seen = (double)(now - c0) / (double)(k1 - k0);

			/* Beyond these the clock was stepped, not slewed. */
			if (seen > 0.5 && seen < 2.0)
				rate = seen;
		}
	}
}

void lib_wait_asleep(clockid_t id, int64_t target)
{
	int64_t now = 0;

	/* Each round sleeps what is left on the kernel's clock; a clock a
	 * little slower than the kernel's leaves a little more, which the
	 * next round sleeps: they shrink fast. The last microsecond is read,
	 * not slept (a wake-up costs more). */
	for (int round = 0; round < 8; round++) {
		if (read_ns(id, &now) != 0 || now >= target)
			return;
		if (target - now < 1000)
			break;
		(void)kernel_wait(target - now, NULL);
	}
	while (read_ns(id, &now) == 0 && now < target)
		;
}

static int sleep_until(clockid_t id, int64_t target, int64_t *left)
{
	sigset_t all, mask;
	int err;

	sigfillset(&all);
	if (pthread_sigmask(SIG_BLOCK, &all, &mask) != 0)
		return EINVAL; /* not reached: the arguments are valid */
	err = sleep_masked(id, target, left, &mask);
	pthread_sigmask(SIG_SETMASK, &mask, NULL);
	return err;
}

CLOCKD_EXPORT int clockd_clock_nanosleep(clockid_t id, int flags, const struct timespec *req,
					 struct timespec *rem)
{
	int64_t target, left = 0, now = 0;
	int err;

	if (!is_clockd_clock(id))
		return clock_nanosleep(id, flags, req, rem);
	if (!req)
		return EFAULT;
	if (!timespec_valid(req) || (flags & ~TIMER_ABSTIME))
		return EINVAL;
	if (flags & TIMER_ABSTIME) {
		target = ts_to_ns(req);
	} else {
		/* A relative sleep measures elapsed time: on the monotonic
		 * clock, which no step of the date moves (the kernel's does
		 * the same). */
		if (is_realtime(id))
			id = id == CLOCKD_REALTIME_COARSE ? CLOCKD_MONOTONIC_COARSE : CLOCKD_MONOTONIC;
		err = read_ns(id, &now);
		if (err)
			return err;
		target = sat_add(now, ts_to_ns(req));
	}
	err = sleep_until(id, target, &left);
	if (err == EINTR && rem && !(flags & TIMER_ABSTIME))
		*rem = ns_to_ts(left);
	return err;
}

/*
 * The delays spin on CLOCKD_MONOTONIC from the moment of the call: the
 * counter (the TSC through the page, calibrated by the daemon) is read
 * each time round, so the resolution is one read, some 20 ns, and the
 * delay is never shorter than asked. When this process cannot read the
 * daemon's counter (the clock then moves once a tick) or there is no live
 * daemon, they spin on the kernel's CLOCK_MONOTONIC instead: a delay is
 * never skipped nor stretched to a tick.
 */
static clockid_t delay_clock(void)
{
	struct timespec res;

	if (clockd_clock_getres(CLOCKD_MONOTONIC, &res) == 0 && res.tv_sec == 0 &&
	    res.tv_nsec <= FINE_RES_NS)
		return CLOCKD_MONOTONIC;
	return CLOCK_MONOTONIC;
}

static void spin_ns(uint64_t ns)
{
	int64_t want = ns > INT64_MAX ? INT64_MAX : (int64_t)ns;
	clockid_t id;
	int64_t start = 0, now = 0;

	if (ns == 0)
		return;
	id = delay_clock();
	if (id != CLOCK_MONOTONIC && read_ns(id, &start) != 0)
		id = CLOCK_MONOTONIC;
	if (id == CLOCK_MONOTONIC)
		start = kclock_ns(id);
	int64_t end = sat_add(start, want);

	do {
		if (id == CLOCK_MONOTONIC) {
			now = kclock_ns(id);
		} else if (read_ns(id, &now) != 0) {
			/* The daemon went away mid-delay: finish on the
			 * kernel's clock, from the start again. */
			id = CLOCK_MONOTONIC;
			now = kclock_ns(id);
			end = sat_add(now, want);
		}
	} while (now < end);
}

CLOCKD_EXPORT void clockd_ndelay(unsigned long ns)
{
	spin_ns(ns);
}

CLOCKD_EXPORT void clockd_udelay(unsigned long us)
{
	spin_ns(us > UINT64_MAX / 1000 ? UINT64_MAX : (uint64_t)us * 1000);
}

CLOCKD_EXPORT void clockd_mdelay(unsigned long ms)
{
	spin_ns(ms > UINT64_MAX / 1000000 ? UINT64_MAX : (uint64_t)ms * 1000000);
}
