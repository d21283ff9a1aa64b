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
 * clock goes back across a switch, either way; see "switching" below.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <clockd/clockd.h>
#include "libclockd/internal.h"
#include "shared/latch.h"
#include "shared/tickmath.h"

#define PRELOAD_EXPORT __attribute__((visibility("default")))

/* ---- the real functions ---------------------------------------------- */

/* Looked up once (dlsym is not cheap), in the constructor or at the first
 * call that needs them; a racing second lookup stores the same value. */
struct real_fns {
	int (*clock_gettime)(clockid_t, struct timespec *);
	int (*clock_getres)(clockid_t, struct timespec *);
	int (*clock_nanosleep)(clockid_t, int, const struct timespec *, struct timespec *);
	int (*nanosleep)(const struct timespec *, struct timespec *);
	int (*gettimeofday)(struct timeval *, void *);
	time_t (*time)(time_t *);
	int (*timer_create)(clockid_t, struct sigevent *, timer_t *);
	int (*timer_settime)(timer_t, int, const struct itimerspec *, struct itimerspec *);
	int (*timer_gettime)(timer_t, struct itimerspec *);
	int (*timer_getoverrun)(timer_t);
	int (*timer_delete)(timer_t);
};

static struct real_fns real;

static void *lookup(void **slot, const char *name)
{
	void *p = __atomic_load_n(slot, __ATOMIC_ACQUIRE);

	if (__builtin_expect(p == NULL, 0)) {
		p = dlsym(RTLD_NEXT, name);
		__atomic_store_n(slot, p, __ATOMIC_RELEASE);
	}
	return p;
}

/* real.NAME, looked up if needed; NULL only if libc lacks it. */
#define REAL(name) ((__typeof__(real.name))lookup((void **)&real.name, #name))

static void lookup_all(void)
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
int __wrap_clock_gettime(clockid_t id, struct timespec *ts);
int __wrap_clock_getres(clockid_t id, struct timespec *res);
int __wrap_clock_nanosleep(clockid_t id, int flags, const struct timespec *req, struct timespec *rem);

int __wrap_clock_gettime(clockid_t id, struct timespec *ts)
{
	__typeof__(real.clock_gettime) f = REAL(clock_gettime);

	return f ? f(id, ts) : (int)syscall(SYS_clock_gettime, id, ts);
}

int __wrap_clock_getres(clockid_t id, struct timespec *res)
{
	__typeof__(real.clock_getres) f = REAL(clock_getres);

	return f ? f(id, res) : (int)syscall(SYS_clock_getres, id, res);
}

int __wrap_clock_nanosleep(clockid_t id, int flags, const struct timespec *req, struct timespec *rem)
{
	__typeof__(real.clock_nanosleep) f = REAL(clock_nanosleep);

	if (f)
		return f(id, flags, req, rem);
	return syscall(SYS_clock_nanosleep, id, flags, req, rem) == 0 ? 0 : errno;
}

/* ---- which clocks ---------------------------------------------------- */

/* The clockd clock serving kernel clock @id for a read, 0 for none (no
 * clockd id is 0). The kernel's static ids are small; the table covers
 * those clockd has a match for. */
static const clockid_t read_map[] = {
	[CLOCK_REALTIME] = CLOCKD_REALTIME,
	[CLOCK_MONOTONIC] = CLOCKD_MONOTONIC,
	[CLOCK_MONOTONIC_RAW] = CLOCKD_MONOTONIC_RAW,
	[CLOCK_REALTIME_COARSE] = CLOCKD_REALTIME_COARSE,
	[CLOCK_MONOTONIC_COARSE] = CLOCKD_MONOTONIC_COARSE,
};

static clockid_t map_read(clockid_t id)
{
	if ((uint32_t)id >= sizeof(read_map) / sizeof(read_map[0]))
		return 0;
	return read_map[id];
}

/* Sleeps and timers: the two clocks the kernel sleeps on and clockd too. */
static clockid_t map_sleep(clockid_t id)
{
	return id == CLOCK_REALTIME || id == CLOCK_MONOTONIC ? read_map[id] : 0;
}

/* ---- where the clocks come from -------------------------------------- */

/*
 * The process is in one of these modes, for every thread at once. Only
 * MODE_CLOCKD is the hot path: one load and one compare before the clockd
 * read, as before there were other modes.
 *
 *   UNSET -> DECIDING -> CLOCKD, or KERNEL for good (no daemon at start)
 *   CLOCKD -> SWITCHING -> AWAY   a read failed: the kernel's clocks
 *   AWAY -> RETURNING             the page is live again (checked every
 *                                 RETURN_CHECK_NS, by the kernel's coarse
 *                                 clock, not on every read), unless its
 *                                 clocks are more than RETURN_HOLD_MAX_NS
 *                                 behind the process's: then AWAY for good
 *   RETURNING -> CLOCKD           clockd has passed every value the
 *                                 process was handed off it
 *   RETURNING -> SWITCHING        a read failed again
 */
enum mode { MODE_UNSET, MODE_DECIDING, MODE_CLOCKD, MODE_KERNEL, MODE_SWITCHING, MODE_AWAY, MODE_RETURNING };
enum policy { POLICY_WARN, POLICY_SILENT, POLICY_REFUSE };

#define RETURN_CHECK_NS 10000000LL
/* Back on clockd, a clock stands still at most about this long (until
 * clockd passes what the process read away); a daemon whose clocks are
 * further behind is not returned to. */
#define RETURN_HOLD_MAX_NS 1000000000LL
/* Switch lines: at most LOG_BURST in any LOG_WINDOW_NS. */
#define LOG_BURST 5
#define LOG_WINDOW_NS 10000000000LL

static int mode = MODE_UNSET;
static pthread_t decider;  /* the thread in MODE_DECIDING */
static pthread_t switcher; /* the thread in MODE_SWITCHING */
static int64_t next_check; /* kernel CLOCK_MONOTONIC_COARSE, ns */

/*
 * The clamped clocks: the monotonic ones the process reads (BOOTTIME is
 * not served). CLOCK_REALTIME and _COARSE are not clamped: the kernel
 * itself steps them (settimeofday, clock_settime, an NTP step), so a
 * program may not assume they never go back; away from clockd the process
 * gets the kernel's realtime as it is, and a switch steps realtime by
 * clockd's offset to the kernel's (small for a disciplined clockd).
 *
 * Away from clockd, a monotonic clock is the kernel's plus off: off is set
 * at the switch so that the clock goes on from the largest value clockd
 * could have handed out (at_switch below). last is the largest value
 * handed out off clockd (away, or held while returning), an atomic max;
 * back on clockd a clock is held at last until clockd passes it.
 */
enum track { TR_MONO, TR_RAW, TR_COARSE, TR_COUNT };

static const clockid_t track_kernel[TR_COUNT] = { CLOCK_MONOTONIC, CLOCK_MONOTONIC_RAW,
						  CLOCK_MONOTONIC_COARSE };
static const clockid_t track_clockd[TR_COUNT] = { CLOCKD_MONOTONIC, CLOCKD_MONOTONIC_RAW,
						  CLOCKD_MONOTONIC_COARSE };

static struct {
	int64_t off;
	int64_t last;
} track[TR_COUNT];

/* The clamped clock behind clockd clock @c, or -1. */
static int track_of(clockid_t c)
{
	for (int k = 0; k < TR_COUNT; k++)
		if (track_clockd[k] == c)
			return k;
	return -1;
}

static int64_t kernel_ns(clockid_t id)
{
	struct timespec ts;

	if (__wrap_clock_gettime(id, &ts) != 0)
		return 0;
	return ts_to_ns(&ts);
}

/* *@p = max(*@p, @v); the new maximum. Sequentially consistent: see
 * serve_away() for what pairs with it. */
static int64_t max_into(int64_t *p, int64_t v)
{
	int64_t cur = __atomic_load_n(p, __ATOMIC_SEQ_CST);

	while (v > cur && !__atomic_compare_exchange_n(p, &cur, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
		;
	return v > cur ? v : cur;
}

static enum policy policy(void)
{
	const char *p = getenv("CLOCKD_PRELOAD");

	if (p && strcmp(p, "silent") == 0)
		return POLICY_SILENT;
	if (p && strcmp(p, "refuse") == 0)
		return POLICY_REFUSE;
	return POLICY_WARN;
}

static const char *why_not(const struct clockd_status *st)
{
	static const char *const states[] = { "absent", "live", "stale", "gone" };

	if (st->state == CLOCKD_STATE_ABSENT && st->errno_hint)
		return strerror(st->errno_hint);
	return st->state < 4 ? states[st->state] : "unknown state";
}

/* No live daemon at start-up: say so as configured (once: this runs once). */
static void no_daemon(const struct clockd_status *st)
{
	enum policy p = policy();

	if (p == POLICY_SILENT)
		return;
	fprintf(stderr, "libclockd-preload: no live clockd at %s (%s): %s\n",
		st->page_path[0] ? st->page_path : "the page", why_not(st),
		p == POLICY_REFUSE ? "refusing to run (CLOCKD_PRELOAD=refuse)"
				   : "running on the kernel's clocks");
	if (p == POLICY_REFUSE)
		_exit(1);
}

static enum mode decide(void)
{
	struct clockd_status st;
	struct timespec ts;

	lookup_all();
	/* The switches below are this library's fallback: libclockd's own
	 * ($CLOCKD_FALLBACK) would hand out the kernel's clock unclamped. */
	(void)clockd_set_fallback(0);
	memset(&st, 0, sizeof(st));
	if (clockd_status(&st, sizeof(st)) == 0 && st.state == CLOCKD_STATE_LIVE &&
	    clockd_clock_gettime(CLOCKD_MONOTONIC, &ts) == 0)
		return MODE_CLOCKD;
	no_daemon(&st);
	return MODE_KERNEL;
}

/* The first caller decides; others wait for it. The decider itself may
 * come back here (a call the decision makes, or a signal handler reading
 * the clock): it gets the kernel's clock meanwhile. */
static __attribute__((noinline)) bool on_clockd_slow(void)
{
	int m = MODE_UNSET;

	if (__atomic_compare_exchange_n(&mode, &m, MODE_DECIDING, false, __ATOMIC_ACQ_REL,
					__ATOMIC_ACQUIRE)) {
		__atomic_store_n(&decider, pthread_self(), __ATOMIC_RELEASE);
		m = decide();
		__atomic_store_n(&mode, m, __ATOMIC_SEQ_CST);
		return m == MODE_CLOCKD;
	}
	while (m == MODE_DECIDING) {
		if (pthread_equal(__atomic_load_n(&decider, __ATOMIC_ACQUIRE), pthread_self()))
			return false;
		sched_yield();
		m = __atomic_load_n(&mode, __ATOMIC_ACQUIRE);
	}
	return m == MODE_CLOCKD || m == MODE_RETURNING;
}

/* The mode, decided first if it is not yet. */
static int current_mode(void)
{
	int m = __atomic_load_n(&mode, __ATOMIC_SEQ_CST);

	if (m == MODE_UNSET || m == MODE_DECIDING) {
		(void)on_clockd_slow();
		m = __atomic_load_n(&mode, __ATOMIC_SEQ_CST);
	}
	return m;
}

/* Sleeps and timers: clockd's, or not (RETURNING is on clockd). */
static inline bool on_clockd(void)
{
	int m = __atomic_load_n(&mode, __ATOMIC_ACQUIRE);

	if (__builtin_expect(m == MODE_CLOCKD, 1))
		return true;
	m = current_mode();
	return m == MODE_CLOCKD || m == MODE_RETURNING;
}

__attribute__((constructor)) static void preload_init(void)
{
	(void)current_mode();
}

/* The errors by which libclockd says the daemon is not there (any more). */
static bool daemon_error(int err)
{
	return err == ENOENT || err == EACCES || err == EPROTO || err == ESTALE || err == ENAMETOOLONG;
}

/* ---- switching ------------------------------------------------------- */

/* One stderr line per switch, at most LOG_BURST of them in LOG_WINDOW_NS;
 * the next line printed counts those that were not. */
static void note_switch(bool away, int err)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static int64_t window;
	static unsigned int lines, dropped;
	char more[64] = "";
	int64_t now;

	if (policy() == POLICY_SILENT || pthread_mutex_trylock(&lock) != 0)
		return;
	now = kernel_ns(CLOCK_MONOTONIC_COARSE);
	if (lines == 0 || now - window >= LOG_WINDOW_NS) {
		window = now;
		lines = 0;
	}
	if (lines >= LOG_BURST) {
		dropped++;
		pthread_mutex_unlock(&lock);
		return;
	}
	lines++;
	if (dropped)
		snprintf(more, sizeof(more), " (%u earlier switches not shown)", dropped);
	dropped = 0;
	if (away)
		fprintf(stderr, "libclockd-preload: clockd went away (%s): on the kernel's clocks until it is back%s\n",
			strerror(err), more);
	else
		fprintf(stderr, "libclockd-preload: clockd is back: on its clocks again%s\n", more);
	pthread_mutex_unlock(&lock);
}

/*
 * The largest value clamped clock @k could have had from the page when
 * the kernel's CLOCK_MONOTONIC read @kmono: its value at the last update,
 * plus the kernel's time since, plus 0.1 % and 1 us. A read extrapolates
 * from the last update for at most the page's stale limit, at the rate of
 * the daemon's counter; the margin covers a counter up to 0.1 % faster
 * than the kernel's (the daemon keeps the same margin when it continues a
 * page, timekeeper.c). A page not yet mapped gives 0.
 */
static int64_t page_floor(int k, int64_t kmono)
{
	const struct clockd_page *pg = __atomic_load_n(&lib_page_ptr, __ATOMIC_ACQUIRE);
	struct clockd_page_data d;
	int64_t v, gap;

	if (!pg)
		return 0;
	latch_snapshot(pg, &d);
	switch (k) {
	case TR_MONO:
		v = d.mono_sec * (int64_t)NSEC_PER_SEC + (int64_t)(d.mono_snsec >> (d.shift & 63));
		break;
	case TR_RAW:
		v = d.raw_sec * (int64_t)NSEC_PER_SEC + (int64_t)(d.raw_snsec >> (d.shift & 63));
		break;
	default:
		v = d.coarse_mono_sec * (int64_t)NSEC_PER_SEC + d.coarse_mono_nsec;
		break;
	}
	gap = kmono - (int64_t)d.kernel_mono_ns;
	if (gap < 0)
		gap = 0;
	return v + gap + gap / 1000 + 1000;
}

/* The calling thread moves the process to the kernel's clocks. */
static void switch_away(int err)
{
	int64_t kmono = kernel_ns(CLOCK_MONOTONIC);

	__atomic_store_n(&switcher, pthread_self(), __ATOMIC_RELEASE);
	for (int k = 0; k < TR_COUNT; k++) {
		int64_t f = page_floor(k, kmono), last = __atomic_load_n(&track[k].last, __ATOMIC_SEQ_CST);

		if (last > f)
			f = last;
		__atomic_store_n(&track[k].off, f - kernel_ns(track_kernel[k]), __ATOMIC_RELAXED);
	}
	__atomic_store_n(&next_check, kernel_ns(CLOCK_MONOTONIC_COARSE) + RETURN_CHECK_NS, __ATOMIC_RELAXED);
	/* Publishes off and next_check. */
	__atomic_store_n(&mode, MODE_AWAY, __ATOMIC_SEQ_CST);
	note_switch(true, err);
}

/* A read in mode @from (CLOCKD or RETURNING) failed with @err, a daemon
 * error: the first thread to see it switches; the others wait for it. */
static void go_away(int from, int err)
{
	int m = from;

	if (__atomic_compare_exchange_n(&mode, &m, MODE_SWITCHING, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
		switch_away(err);
		return;
	}
	while (m == MODE_SWITCHING) {
		/* The switcher itself, from a signal handler: go on. */
		if (pthread_equal(__atomic_load_n(&switcher, __ATOMIC_ACQUIRE), pthread_self()))
			return;
		sched_yield();
		m = __atomic_load_n(&mode, __ATOMIC_SEQ_CST);
	}
}

/* A clamped clock that clockd serves more than RETURN_HOLD_MAX_NS behind
 * what the process reads away (a daemon back on a new page, not one that
 * continues the old): back on clockd, it would stand still that long. */
static bool too_far_behind(void)
{
	struct timespec ts;

	for (int k = 0; k < TR_COUNT; k++) {
		int64_t away = kernel_ns(track_kernel[k]) + __atomic_load_n(&track[k].off, __ATOMIC_RELAXED);

		if (__atomic_load_n(&track[k].last, __ATOMIC_SEQ_CST) == 0)
			continue;
		if (clockd_clock_gettime(track_clockd[k], &ts) == 0 && ts_to_ns(&ts) + RETURN_HOLD_MAX_NS < away)
			return true;
	}
	return false;
}

/* Away: every RETURN_CHECK_NS (one thread checks) whether clockd reads
 * again, the page live (a replaced file is mapped by the failing read,
 * lib_page_gone()); if so, RETURNING. */
static void check_return(void)
{
	int64_t now = kernel_ns(CLOCK_MONOTONIC_COARSE), due = __atomic_load_n(&next_check, __ATOMIC_RELAXED);
	struct timespec ts;
	int m = MODE_AWAY, err = errno;

	if (now < due ||
	    !__atomic_compare_exchange_n(&next_check, &due, now + RETURN_CHECK_NS, false, __ATOMIC_RELAXED,
					 __ATOMIC_RELAXED))
		return;
	if (clockd_clock_gettime(CLOCKD_MONOTONIC, &ts) != 0) {
		errno = err;
		return;
	}
	if (too_far_behind()) {
		/* For good: the next check never comes. */
		__atomic_store_n(&next_check, INT64_MAX, __ATOMIC_RELAXED);
		if (policy() != POLICY_SILENT)
			fprintf(stderr, "libclockd-preload: clockd is back with clocks more than %d s behind this "
					"process's: staying on the kernel's clocks\n",
				(int)(RETURN_HOLD_MAX_NS / NSEC_PER_SEC));
	} else if (__atomic_compare_exchange_n(&mode, &m, MODE_RETURNING, false, __ATOMIC_SEQ_CST,
					       __ATOMIC_SEQ_CST)) {
		note_switch(false, 0);
	}
	errno = err;
}

/* Away: clock @k on the kernel's clock, into *@ts. False when the mode
 * changed meanwhile (the caller starts again).
 *
 * The value goes into last before the mode is read again, and a thread
 * leaving MODE_AWAY stores the mode before it reads last (all sequentially
 * consistent): so either it sees this value, or this thread sees the new
 * mode and hands out nothing from here. */
static bool serve_away(int k, struct timespec *ts)
{
	int64_t v = kernel_ns(track_kernel[k]) + __atomic_load_n(&track[k].off, __ATOMIC_RELAXED);

	v = max_into(&track[k].last, v);
	if (__atomic_load_n(&mode, __ATOMIC_SEQ_CST) != MODE_AWAY)
		return false;
	*ts = ns_to_ts(v);
	return true;
}

/* Returning: every clamped clock has passed its last value on clockd.
 * Clocks never read away have a last of 0. */
static bool all_passed(void)
{
	struct timespec ts;

	for (int k = 0; k < TR_COUNT; k++) {
		int64_t last = __atomic_load_n(&track[k].last, __ATOMIC_SEQ_CST);

		if (last && (clockd_clock_gettime(track_clockd[k], &ts) != 0 || ts_to_ns(&ts) < last))
			return false;
	}
	return true;
}

/* Returning: clockd clock @c (clamped clock @k, or -1) into *@ts, held at
 * its last value until clockd passes it. 0, -1 with errno set (not a
 * daemon error), or 1: went away, start again. */
static int serve_returning(clockid_t c, int k, struct timespec *ts)
{
	int64_t v, last;
	int m = MODE_RETURNING;

	if (clockd_clock_gettime(c, ts) != 0) {
		if (!daemon_error(errno))
			return -1;
		go_away(MODE_RETURNING, errno);
		return 1;
	}
	if (k >= 0) {
		v = ts_to_ns(ts);
		last = __atomic_load_n(&track[k].last, __ATOMIC_SEQ_CST);
		if (v < last) {
			*ts = ns_to_ts(last);
			return 0;
		}
	}
	/* Also for a realtime read: a program that reads nothing else
	 * must get back to the hot path too. */
	if (all_passed())
		(void)__atomic_compare_exchange_n(&mode, &m, MODE_CLOCKD, false, __ATOMIC_SEQ_CST,
						  __ATOMIC_SEQ_CST);
	return 0;
}

/* ---- reads ----------------------------------------------------------- */

/*
 * Kernel clock @id, served by clockd clock @c, off the hot path: the first
 * call, a failed read, the reads away from clockd and while returning.
 * errno is @err again after a success.
 */
static __attribute__((noinline)) int read_slow(clockid_t id, clockid_t c, struct timespec *ts, int err)
{
	int k = track_of(c), r;

	for (;;) {
		int m = current_mode();

		switch (m) {
		case MODE_KERNEL:
			return REAL(clock_gettime)(id, ts);
		case MODE_CLOCKD:
			if (clockd_clock_gettime(c, ts) == 0)
				return 0;
			if (!daemon_error(errno))
				return -1;
			go_away(MODE_CLOCKD, errno);
			break;
		case MODE_SWITCHING:
			if (pthread_equal(__atomic_load_n(&switcher, __ATOMIC_ACQUIRE), pthread_self()))
				return REAL(clock_gettime)(id, ts);
			sched_yield();
			break;
		case MODE_AWAY:
			check_return();
			if (k < 0) {
				if (__atomic_load_n(&mode, __ATOMIC_SEQ_CST) != MODE_AWAY)
					break;
				errno = err;
				return REAL(clock_gettime)(id, ts);
			}
			if (serve_away(k, ts)) {
				errno = err;
				return 0;
			}
			break;
		default: /* MODE_RETURNING */
			r = serve_returning(c, k, ts);
			if (r <= 0) {
				if (r == 0)
					errno = err;
				return r;
			}
			break;
		}
		errno = err;
	}
}

/* Kernel clock @id as clockd clock @c serves it: the hot path. */
static inline int read_clock(clockid_t id, clockid_t c, struct timespec *ts)
{
	int err = errno;

	if (__builtin_expect(__atomic_load_n(&mode, __ATOMIC_ACQUIRE) == MODE_CLOCKD, 1) &&
	    __builtin_expect(clockd_clock_gettime(c, ts) == 0, 1))
		return 0;
	if (!ts) {
		errno = EFAULT;
		return -1;
	}
	return read_slow(id, c, ts, err);
}

PRELOAD_EXPORT int clock_gettime(clockid_t id, struct timespec *ts)
{
	clockid_t c = map_read(id);

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

/* ---- sleeps ---------------------------------------------------------- */

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
			if (!daemon_error(err) && err != 0)
				return err;
			if (err)
				go_away(m, err);
			continue;
		}
		if (m == MODE_SWITCHING &&
		    !pthread_equal(__atomic_load_n(&switcher, __ATOMIC_ACQUIRE), pthread_self())) {
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
		if (err == EINTR) {
			if (read_clock(id, c, &now) == 0)
				*left = t - ts_to_ns(&now);
			if (*left < 0)
				*left = 0;
			return EINTR;
		}
		if (err)
			return err;
	}
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

/* ---- POSIX timers ---------------------------------------------------- */

/*
 * The timer_t of a clockd timer is an id of ours, OWN_BASE + a slot of
 * the table, never a pointer to libclockd's timer: libc's timer_t values
 * are the kernel's timer ids (0 .. INT_MAX) or, for its SIGEV_THREAD
 * timers, pointers with the top bit set (negative); OWN_BASE is above
 * INT_MAX and positive, so the two never meet, and timer_*() tell a timer
 * of ours from libc's by its value alone. On a 32-bit system there is no
 * such room: every timer is libc's there.
 */
#if UINTPTR_MAX > 0xffffffffu
#define OWN_TIMERS 1
/* Low 32 bits zero: the id as an int (SIGEV_SIGNAL without a sigevent
 * sends it, as the kernel does) is the slot number. */
#define OWN_BASE ((uintptr_t)0x434b00000000ull)
#else
#define OWN_TIMERS 0
#define OWN_BASE ((uintptr_t)0)
#endif
#define OWN_MAX 4096

static clockd_timer_t own[OWN_MAX];
static pthread_mutex_t own_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned int own_hint;

/* A free slot, taken (marked with a placeholder until the timer is
 * stored), or -1. */
static int own_alloc(void)
{
	int slot = -1;

	pthread_mutex_lock(&own_lock);
	for (unsigned int i = 0; i < OWN_MAX && slot < 0; i++) {
		unsigned int k = (own_hint + i) % OWN_MAX;

		if (!own[k]) {
			slot = (int)k;
			__atomic_store_n(&own[k], (clockd_timer_t)(uintptr_t)1, __ATOMIC_RELAXED);
			own_hint = k + 1;
		}
	}
	pthread_mutex_unlock(&own_lock);
	return slot;
}

static void own_free(int slot)
{
	__atomic_store_n(&own[slot], NULL, __ATOMIC_RELEASE);
}

static timer_t own_id(int slot)
{
	return (timer_t)(OWN_BASE + (uintptr_t)slot);
}

/* The clockd timer behind @id, or NULL when @id is libc's. */
static clockd_timer_t own_timer(timer_t id)
{
	uintptr_t k = (uintptr_t)id - OWN_BASE;
	clockd_timer_t t;

	if (!OWN_TIMERS || k >= OWN_MAX)
		return NULL;
	t = __atomic_load_n(&own[k], __ATOMIC_ACQUIRE);
	return (uintptr_t)t > 1 ? t : NULL;
}

/* The POSIX sigevent as libclockd's; false for a kind it lacks. */
static bool map_sigevent(const struct sigevent *sev, int slot, struct clockd_sigevent *out)
{
	memset(out, 0, sizeof(*out));
	out->cpu = -1;
	if (!sev) {
		out->notify = CLOCKD_SIGEV_SIGNAL;
		out->signo = SIGALRM;
		out->value.sival_ptr = (void *)own_id(slot);
		return true;
	}
	out->value = sev->sigev_value;
	switch (sev->sigev_notify) {
	case SIGEV_NONE:
		out->notify = CLOCKD_SIGEV_NONE;
		return true;
	case SIGEV_SIGNAL:
		out->notify = CLOCKD_SIGEV_SIGNAL;
		out->signo = sev->sigev_signo;
		return true;
	case SIGEV_THREAD:
		/* On the library's delivery thread; the attributes are not
		 * used (libclockd(3)). */
		out->notify = CLOCKD_SIGEV_THREAD_CPU;
		out->fn = sev->sigev_notify_function;
		return true;
	default:
		return false;
	}
}

static int create_own(clockid_t c, const struct sigevent *sev, timer_t *timerid)
{
	struct clockd_sigevent cs;
	clockd_timer_t t;
	int slot, err;

	if (!timerid) {
		errno = EFAULT;
		return -1;
	}
	slot = own_alloc();
	if (slot < 0) {
		errno = EAGAIN;
		return -1;
	}
	if (!map_sigevent(sev, slot, &cs)) {
		own_free(slot);
		errno = EINVAL;
		return -1;
	}
	if (clockd_timer_create(c, &cs, &t) != 0) {
		err = errno;
		own_free(slot);
		errno = err;
		return -1;
	}
	__atomic_store_n(&own[slot], t, __ATOMIC_RELEASE);
	*timerid = own_id(slot);
	return 0;
}

/*
 * The kernel's timers made here on CLOCK_REALTIME or CLOCK_MONOTONIC for a
 * process that reads clockd's clocks (made away from clockd, or
 * SIGEV_THREAD_ID): they stay the kernel's for their life and expire by
 * the kernel's clock, but the process's absolute times are on its own
 * clock. timer_settime() with TIMER_ABSTIME moves such an expiry by the
 * process's offset to the kernel at the time of arming (kernel_abs).
 * Guarded by own_lock; a timer beyond KTIMER_MAX is armed unconverted.
 */
#define KTIMER_MAX 256

static struct {
	timer_t id;
	clockid_t clock;
	bool used;
} ktimers[KTIMER_MAX];

static void ktimer_add(timer_t id, clockid_t clock)
{
	pthread_mutex_lock(&own_lock);
	for (int i = 0; i < KTIMER_MAX; i++) {
		if (!ktimers[i].used) {
			ktimers[i].id = id;
			ktimers[i].clock = clock;
			ktimers[i].used = true;
			break;
		}
	}
	pthread_mutex_unlock(&own_lock);
}

/* The clock of kernel timer @id if it is one of ktimers (removed from
 * the table with @remove), else -1. */
static clockid_t ktimer_clock(timer_t id, bool remove)
{
	clockid_t clock = -1;

	pthread_mutex_lock(&own_lock);
	for (int i = 0; i < KTIMER_MAX; i++) {
		if (ktimers[i].used && ktimers[i].id == id) {
			clock = ktimers[i].clock;
			ktimers[i].used = !remove;
			break;
		}
	}
	pthread_mutex_unlock(&own_lock);
	return clock;
}

/* Absolute time @t of the process's clock @id as the kernel's clock @id:
 * @t less the process's offset to the kernel, plus the resolution of the
 * process's clock (a clockd clock without a counter the client reads
 * moves once a tick: read at the kernel's expiry it may still show the
 * tick before). The process's clock is read first: the offset is then
 * never overestimated, so the expiry is never moved early. */
static struct timespec kernel_abs(clockid_t id, const struct timespec *t)
{
	struct timespec p, res;
	int64_t k;

	if (read_clock(id, map_read(id), &p) != 0)
		return *t;
	k = kernel_ns(id);
	if (clock_getres(id, &res) != 0)
		res = (struct timespec){ 0, 0 };
	return ns_to_ts(ts_to_ns(t) - (ts_to_ns(&p) - k) + ts_to_ns(&res));
}

PRELOAD_EXPORT int timer_create(clockid_t id, struct sigevent *restrict sev, timer_t *restrict timerid)
{
	clockid_t c = map_sleep(id);
	int r;

	/* SIGEV_THREAD_ID names a thread libclockd cannot signal: libc's. */
	if (OWN_TIMERS && c && on_clockd() && !(sev && sev->sigev_notify == SIGEV_THREAD_ID))
		return create_own(c, sev, timerid);
	r = REAL(timer_create)(id, sev, timerid);
	if (r == 0 && c && timerid && current_mode() != MODE_KERNEL)
		ktimer_add(*timerid, id);
	return r;
}

PRELOAD_EXPORT int timer_settime(timer_t id, int flags, const struct itimerspec *restrict value,
				 struct itimerspec *restrict old)
{
	clockd_timer_t t = own_timer(id);

	struct itimerspec v;
	clockid_t clock;

	if (t)
		return clockd_timer_settime(t, flags, value, old);
	if ((flags & TIMER_ABSTIME) && value && (value->it_value.tv_sec || value->it_value.tv_nsec) &&
	    (clock = ktimer_clock(id, false)) >= 0) {
		v = *value;
		v.it_value = kernel_abs(clock, &value->it_value);
		if (v.it_value.tv_sec < 0) /* long past: expire now */
			v.it_value = (struct timespec){ 0, 1 };
		return REAL(timer_settime)(id, flags, &v, old);
	}
	return REAL(timer_settime)(id, flags, value, old);
}

PRELOAD_EXPORT int timer_gettime(timer_t id, struct itimerspec *value)
{
	clockd_timer_t t = own_timer(id);

	if (t)
		return clockd_timer_gettime(t, value);
	return REAL(timer_gettime)(id, value);
}

PRELOAD_EXPORT int timer_getoverrun(timer_t id)
{
	clockd_timer_t t = own_timer(id);

	if (t)
		return clockd_timer_getoverrun(t);
	return REAL(timer_getoverrun)(id);
}

PRELOAD_EXPORT int timer_delete(timer_t id)
{
	clockd_timer_t t = own_timer(id);

	if (!t) {
		(void)ktimer_clock(id, true);
		return REAL(timer_delete)(id);
	}
	if (clockd_timer_delete(t) != 0)
		return -1;
	own_free((int)((uintptr_t)id - OWN_BASE));
	return 0;
}
