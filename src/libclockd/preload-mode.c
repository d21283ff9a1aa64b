/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libclockd-preload.so: where the clocks come from, the process's mode
 * (preload.h), the switches away from clockd and back, the slow reads. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "libclockd/internal.h"
#include "libclockd/preload.h"
#include "shared/latch.h"
#include "shared/tickmath.h"

#define RETURN_CHECK_NS 10000000LL
/* Back on clockd, a clock stands still at most about this long (until
 * clockd passes what the process read away); a daemon whose clocks are
 * further behind is not returned to. */
#define RETURN_HOLD_MAX_NS 1000000000LL
#define RETURN_HOLD_MAX_TEXT "1 s" /* the same, for the message */
/* Switch lines: at most LOG_BURST in any LOG_WINDOW_NS. */
#define LOG_BURST 5
#define LOG_WINDOW_NS 10000000000LL

int preload_mode = MODE_UNSET;
static int64_t next_check; /* kernel CLOCK_MONOTONIC_COARSE, ns */

/*
 * This thread holds the mode in MODE_DECIDING or MODE_SWITCHING, or is
 * about to try: set before the compare-and-exchange, so that a signal
 * handler that interrupts the thread between the two, and reads the
 * clock, knows that the mode it finds is this thread's own and does not
 * wait for it (it would wait for ever: the holder is the thread it
 * interrupted). A thread-local of the initial-exec model: read with no
 * call, async-signal-safe. Each taker saves and restores it, for the
 * handler that takes the mode inside another taker's window. Its stores
 * are sequentially consistent, as the mode's: the compiler keeps them in
 * program order with those, where the handler sees them.
 */
static LIB_THREAD int holds_mode;

static int hold_mode(int v)
{
	int was = __atomic_load_n(&holds_mode, __ATOMIC_RELAXED);

	__atomic_store_n(&holds_mode, v, __ATOMIC_SEQ_CST);
	return was;
}

bool preload_holds_mode(void)
{
	return __atomic_load_n(&holds_mode, __ATOMIC_RELAXED) != 0;
}

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
 * back on clockd a clock is held at held, last as it was when the process
 * left AWAY, until clockd passes it. Not at last itself: a thread that
 * read the mode AWAY, was preempted and computed its value after the
 * process left AWAY still raises last, then sees the new mode and hands
 * nothing out; held at that last, another thread would hand it out after
 * the move back to clockd had been decided on the lower one (a CI run saw
 * 918 reads go back, the first by 288 us).
 */
enum track { TR_MONO, TR_RAW, TR_COARSE, TR_COUNT };

static const clockid_t track_kernel[TR_COUNT] = { CLOCK_MONOTONIC, CLOCK_MONOTONIC_RAW,
						  CLOCK_MONOTONIC_COARSE };
static const clockid_t track_clockd[TR_COUNT] = { CLOCKD_MONOTONIC, CLOCKD_MONOTONIC_RAW,
						  CLOCKD_MONOTONIC_COARSE };

static struct {
	int64_t off;
	int64_t last;
	int64_t held;
} track[TR_COUNT];

/* The clamped clock behind clockd clock @c, or -1. */
static int track_of(clockid_t c)
{
	for (int k = 0; k < TR_COUNT; k++)
		if (track_clockd[k] == c)
			return k;
	return -1;
}

int64_t kernel_ns(clockid_t id)
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

enum policy policy(void)
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
	int m = MODE_UNSET, was = hold_mode(1);

	if (__atomic_compare_exchange_n(&preload_mode, &m, MODE_DECIDING, false, __ATOMIC_ACQ_REL,
					__ATOMIC_ACQUIRE)) {
		m = decide();
		__atomic_store_n(&preload_mode, m, __ATOMIC_SEQ_CST);
		hold_mode(was);
		return m == MODE_CLOCKD;
	}
	hold_mode(was);
	while (m == MODE_DECIDING) {
		if (preload_holds_mode())
			return false;
		sched_yield();
		m = __atomic_load_n(&preload_mode, __ATOMIC_ACQUIRE);
	}
	return m == MODE_CLOCKD || m == MODE_RETURNING;
}

/* The mode, decided first if it is not yet. */
int current_mode(void)
{
	int m = __atomic_load_n(&preload_mode, __ATOMIC_SEQ_CST);

	if (m == MODE_UNSET || m == MODE_DECIDING) {
		(void)on_clockd_slow();
		m = __atomic_load_n(&preload_mode, __ATOMIC_SEQ_CST);
	}
	return m;
}

__attribute__((constructor)) static void preload_init(void)
{
	(void)current_mode();
}

/* ---- switching ------------------------------------------------------- */

/* Append @s to the line @buf of @size, @*len used so far. */
static void line_add(char *buf, size_t size, size_t *len, const char *s)
{
	while (*s && *len + 1 < size)
		buf[(*len)++] = *s++;
	buf[*len] = '\0';
}

/* Write @s to stderr with write(2) alone: a switch can happen in a
 * clock_gettime() called from a signal handler, where stdio may not be
 * used (async-signal-safe). */
static void say(const char *s)
{
	size_t n = strlen(s);

	while (n > 0) {
		ssize_t w = write(STDERR_FILENO, s, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}

/* One stderr line per switch, at most LOG_BURST of them in LOG_WINDOW_NS;
 * the next line printed counts those that were not. Async-signal-safe:
 * an atomic flag, not a lock (a handler's switch while the interrupted
 * code prints is not shown), and no stdio or strerror(). */
static void note_switch(bool away, int err)
{
	static int busy;
	static int64_t window;
	static unsigned int lines, dropped;
	char line[256], num[16];
	size_t len = 0;
	int64_t now;
	int saved = errno;

	if (policy() == POLICY_SILENT || __atomic_exchange_n(&busy, 1, __ATOMIC_ACQUIRE))
		return;
	now = kernel_ns(CLOCK_MONOTONIC_COARSE);
	if (lines == 0 || now - window >= LOG_WINDOW_NS) {
		window = now;
		lines = 0;
	}
	if (lines >= LOG_BURST) {
		dropped++;
		__atomic_store_n(&busy, 0, __ATOMIC_RELEASE);
		return;
	}
	lines++;
	if (away) {
		const char *why = strerrordesc_np(err);

		line_add(line, sizeof(line), &len, "libclockd-preload: clockd went away (");
		line_add(line, sizeof(line), &len, why ? why : "unknown error");
		line_add(line, sizeof(line), &len, "): on the kernel's clocks until it is back");
	} else {
		line_add(line, sizeof(line), &len, "libclockd-preload: clockd is back: on its clocks again");
	}
	if (dropped) {
		size_t i = sizeof(num) - 1;

		num[i] = '\0';
		for (unsigned int v = dropped; i > 0 && (v || i == sizeof(num) - 1); v /= 10)
			num[--i] = (char)('0' + v % 10);
		line_add(line, sizeof(line), &len, " (");
		line_add(line, sizeof(line), &len, num + i);
		line_add(line, sizeof(line), &len, " earlier switches not shown)");
	}
	line_add(line, sizeof(line), &len, "\n");
	dropped = 0;
	say(line);
	__atomic_store_n(&busy, 0, __ATOMIC_RELEASE);
	errno = saved;
}

/*
 * The largest value clamped clock @k could have had from the page when
 * the kernel's CLOCK_MONOTONIC read @kmono: its value at the last update,
 * plus the kernel's time since, plus a margin and 1 us. A read
 * extrapolates from the last update for at most the page's stale limit,
 * at the page's rate: CLOCKD_MONOTONIC at its disciplined rate (mult, up
 * to discipline_max_ppm from the counter's raw_mult), all of them at the
 * counter's, taken to be within 0.1 % of the kernel's. The margin covers
 * both (the daemon keeps the same one when it continues a page,
 * timekeeper.c). A page not yet mapped gives 0.
 */
static int64_t page_floor(int k, int64_t kmono)
{
	const struct clockd_page *pg = __atomic_load_n(&lib_page_ptr, __ATOMIC_ACQUIRE);
	struct clockd_page_data d;
	int64_t v, gap;
	uint64_t ppm;

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
	/* The page is in the initial time namespace's terms, the process's
	 * clocks in its own. */
	gap = kmono - lib_timens_mono_ns() - (int64_t)d.kernel_mono_ns;
	if (gap < 0)
		gap = 0;
	ppm = 1000;
	if (k != TR_RAW && d.raw_mult && d.mult > d.raw_mult)
		ppm += (uint64_t)(((unsigned __int128)(d.mult - d.raw_mult) * 1000000u + d.raw_mult - 1) / d.raw_mult);
	return v + lib_timens_mono_ns() + gap + (int64_t)(((unsigned __int128)(uint64_t)gap * ppm + 999999) / 1000000) +
	       1000;
}

/* The calling thread moves the process to the kernel's clocks. */
static void switch_away(int err)
{
	int64_t kmono = kernel_ns(CLOCK_MONOTONIC);

	for (int k = 0; k < TR_COUNT; k++) {
		int64_t f = page_floor(k, kmono), last = __atomic_load_n(&track[k].last, __ATOMIC_SEQ_CST);

		if (last > f)
			f = last;
		__atomic_store_n(&track[k].off, f - kernel_ns(track_kernel[k]), __ATOMIC_RELAXED);
	}
	__atomic_store_n(&next_check, kernel_ns(CLOCK_MONOTONIC_COARSE) + RETURN_CHECK_NS, __ATOMIC_RELAXED);
	/* Publishes off and next_check. */
	__atomic_store_n(&preload_mode, MODE_AWAY, __ATOMIC_SEQ_CST);
	note_switch(true, err);
}

/* A read in mode @from (CLOCKD or RETURNING) failed with @err, a daemon
 * error: the first thread to see it switches; the others wait for it. */
void go_away(int from, int err)
{
	int m = from, was = hold_mode(1);

	if (__atomic_compare_exchange_n(&preload_mode, &m, MODE_SWITCHING, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
		switch_away(err);
		hold_mode(was);
		return;
	}
	hold_mode(was);
	while (m == MODE_SWITCHING) {
		/* The switcher itself, from a signal handler: go on. */
		if (preload_holds_mode())
			return;
		sched_yield();
		m = __atomic_load_n(&preload_mode, __ATOMIC_SEQ_CST);
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
	int m = MODE_AWAY, err = errno, was;

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
			say("libclockd-preload: clockd is back with clocks more than " RETURN_HOLD_MAX_TEXT
			    " behind this process's: staying on the kernel's clocks\n");
	} else {
		was = hold_mode(1);
		if (__atomic_compare_exchange_n(&preload_mode, &m, MODE_SWITCHING, false, __ATOMIC_SEQ_CST,
						__ATOMIC_SEQ_CST)) {
			/* Out of AWAY first (serve_away's values are in last,
			 * or never handed out), then last is what was handed
			 * out. */
			for (int k = 0; k < TR_COUNT; k++)
				__atomic_store_n(&track[k].held, __atomic_load_n(&track[k].last, __ATOMIC_SEQ_CST),
						 __ATOMIC_RELAXED);
			/* Publishes held. */
			__atomic_store_n(&preload_mode, MODE_RETURNING, __ATOMIC_SEQ_CST);
			note_switch(false, 0);
		}
		hold_mode(was);
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
	if (__atomic_load_n(&preload_mode, __ATOMIC_SEQ_CST) != MODE_AWAY)
		return false;
	*ts = ns_to_ts(v);
	return true;
}

/* Returning: every clamped clock has passed its held value on clockd.
 * Clocks never read away have a held value of 0. */
static bool all_passed(void)
{
	struct timespec ts;

	for (int k = 0; k < TR_COUNT; k++) {
		int64_t held = __atomic_load_n(&track[k].held, __ATOMIC_SEQ_CST);

		if (held && (clockd_clock_gettime(track_clockd[k], &ts) != 0 || ts_to_ns(&ts) < held))
			return false;
	}
	return true;
}

/* Returning: clockd clock @c (clamped clock @k, or -1) into *@ts, held at
 * its held value until clockd passes it. 0, -1 with errno set (not a
 * daemon error), or 1: went away, start again. */
static int serve_returning(clockid_t c, int k, struct timespec *ts)
{
	int64_t v, held;
	int m = MODE_RETURNING;

	if (clockd_clock_gettime(c, ts) != 0) {
		if (!daemon_error(errno))
			return -1;
		go_away(MODE_RETURNING, errno);
		return 1;
	}
	if (k >= 0) {
		v = ts_to_ns(ts);
		held = __atomic_load_n(&track[k].held, __ATOMIC_SEQ_CST);
		if (v < held) {
			*ts = ns_to_ts(held);
			return 0;
		}
	}
	/* Also for a realtime read: a program that reads nothing else
	 * must get back to the hot path too. */
	if (all_passed())
		(void)__atomic_compare_exchange_n(&preload_mode, &m, MODE_CLOCKD, false, __ATOMIC_SEQ_CST,
						  __ATOMIC_SEQ_CST);
	return 0;
}

/* ---- reads ----------------------------------------------------------- */

/*
 * Kernel clock @id, served by clockd clock @c, off the hot path: the first
 * call, a failed read, the reads away from clockd and while returning.
 * errno is @err again after a success.
 */
__attribute__((noinline)) int read_slow(clockid_t id, clockid_t c, struct timespec *ts, int err)
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
			if (preload_holds_mode())
				return REAL(clock_gettime)(id, ts);
			sched_yield();
			break;
		case MODE_AWAY:
			check_return();
			if (k < 0) {
				if (__atomic_load_n(&preload_mode, __ATOMIC_SEQ_CST) != MODE_AWAY)
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
