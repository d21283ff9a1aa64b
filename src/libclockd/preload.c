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
 * Whether the process runs on clockd is decided once, at the first call
 * or in the constructor, whichever comes first: a clock that changed
 * source half-way would jump. If the daemon goes away later, the process
 * moves to the kernel's clocks for good (with one warning).
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

/* ---- the decision: clockd or the kernel ------------------------------ */

enum mode { MODE_UNSET, MODE_DECIDING, MODE_CLOCKD, MODE_KERNEL };
enum policy { POLICY_WARN, POLICY_SILENT, POLICY_REFUSE };

static int mode = MODE_UNSET;
static pthread_t decider;

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
		__atomic_store_n(&mode, m, __ATOMIC_RELEASE);
		return m == MODE_CLOCKD;
	}
	while (m == MODE_DECIDING) {
		if (pthread_equal(__atomic_load_n(&decider, __ATOMIC_ACQUIRE), pthread_self()))
			return false;
		sched_yield();
		m = __atomic_load_n(&mode, __ATOMIC_ACQUIRE);
	}
	return m == MODE_CLOCKD;
}

static inline bool on_clockd(void)
{
	int m = __atomic_load_n(&mode, __ATOMIC_ACQUIRE);

	if (__builtin_expect(m == MODE_CLOCKD, 1))
		return true;
	if (m == MODE_KERNEL)
		return false;
	return on_clockd_slow();
}

__attribute__((constructor)) static void preload_init(void)
{
	(void)on_clockd();
}

/* The errors by which libclockd says the daemon is not there (any more). */
static bool daemon_error(int err)
{
	return err == ENOENT || err == EACCES || err == EPROTO || err == ESTALE || err == ENAMETOOLONG;
}

/* A read or sleep found the daemon gone mid-run: the kernel's clocks from
 * now on, for every thread (the first to see it says so). */
static __attribute__((noinline)) void daemon_lost(int err)
{
	int m = MODE_CLOCKD;

	if (__atomic_compare_exchange_n(&mode, &m, MODE_KERNEL, false, __ATOMIC_ACQ_REL,
					__ATOMIC_RELAXED) &&
	    policy() != POLICY_SILENT)
		fprintf(stderr, "libclockd-preload: clockd went away (%s): now on the kernel's clocks\n",
			strerror(err));
}

/* ---- reads ----------------------------------------------------------- */

PRELOAD_EXPORT int clock_gettime(clockid_t id, struct timespec *ts)
{
	clockid_t c = map_read(id);
	int err;

	if (c && on_clockd()) {
		err = errno;
		if (__builtin_expect(clockd_clock_gettime(c, ts) == 0, 1))
			return 0;
		if (!daemon_error(errno))
			return -1;
		daemon_lost(errno);
		errno = err;
	}
	return REAL(clock_gettime)(id, ts);
}

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
		daemon_lost(errno);
		errno = err;
	}
	return REAL(clock_getres)(id, res);
}

/* CLOCKD_REALTIME into *@ts; false (the daemon is not or no longer there)
 * and errno untouched when the caller should ask the kernel. */
static bool clockd_realtime(clockid_t c, struct timespec *ts)
{
	int err = errno;

	if (!on_clockd())
		return false;
	if (clockd_clock_gettime(c, ts) == 0)
		return true;
	daemon_lost(errno);
	errno = err;
	return false;
}

PRELOAD_EXPORT int gettimeofday(struct timeval *restrict tv, void *restrict tz)
{
	struct timespec ts;
	struct timeval *out = tv;

	/* Linux takes a NULL @tv; the header says it may not be, so that a
	 * plain test would be optimised away. */
	__asm__("" : "+r"(out));
	if (!out || !clockd_realtime(CLOCKD_REALTIME, &ts))
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

	if (!clockd_realtime(CLOCKD_REALTIME_COARSE, &ts))
		return REAL(time)(t);
	if (t)
		*t = ts.tv_sec;
	return ts.tv_sec;
}

/* ---- sleeps ---------------------------------------------------------- */

PRELOAD_EXPORT int clock_nanosleep(clockid_t id, int flags, const struct timespec *req,
				   struct timespec *rem)
{
	clockid_t c = map_sleep(id);
	int err;

	if (c && on_clockd()) {
		err = clockd_clock_nanosleep(c, flags, req, rem);
		if (!daemon_error(err))
			return err;
		daemon_lost(err);
	}
	return REAL(clock_nanosleep)(id, flags, req, rem);
}

/* Linux measures nanosleep() on CLOCK_MONOTONIC; so does this. */
PRELOAD_EXPORT int nanosleep(const struct timespec *req, struct timespec *rem)
{
	int err;

	if (on_clockd()) {
		err = clockd_clock_nanosleep(CLOCKD_MONOTONIC, 0, req, rem);
		if (!daemon_error(err)) {
			if (err == 0)
				return 0;
			errno = err;
			return -1;
		}
		daemon_lost(err);
	}
	return REAL(nanosleep)(req, rem);
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

PRELOAD_EXPORT int timer_create(clockid_t id, struct sigevent *restrict sev, timer_t *restrict timerid)
{
	clockid_t c = map_sleep(id);

	/* SIGEV_THREAD_ID names a thread libclockd cannot signal: libc's. */
	if (OWN_TIMERS && c && on_clockd() && !(sev && sev->sigev_notify == SIGEV_THREAD_ID))
		return create_own(c, sev, timerid);
	return REAL(timer_create)(id, sev, timerid);
}

PRELOAD_EXPORT int timer_settime(timer_t id, int flags, const struct itimerspec *restrict value,
				 struct itimerspec *restrict old)
{
	clockd_timer_t t = own_timer(id);

	if (t)
		return clockd_timer_settime(t, flags, value, old);
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

	if (!t)
		return REAL(timer_delete)(id);
	if (clockd_timer_delete(t) != 0)
		return -1;
	own_free((int)((uintptr_t)id - OWN_BASE));
	return 0;
}
