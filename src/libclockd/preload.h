/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libclockd-preload.so's internals, shared by its files (preload.c has the
 * overview):
 *   preload.c        the real functions (libc's), libclockd's kernel clocks
 *   preload-mode.c   where the clocks come from: the mode machine, the
 *                    switches away from clockd and back, the slow reads
 *   preload-clock.c  the read interposers
 *   preload-sleep.c  the sleep interposers
 *   preload-timer.c  the POSIX timer interposers and their id tables
 * Nothing here is exported (preload.sym); the module's own symbols are
 * hidden.
 */
#ifndef CLOCKD_PRELOAD_H
#define CLOCKD_PRELOAD_H

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/time.h>
#include <time.h>

#include <clockd/clockd.h>

#define PRELOAD_EXPORT __attribute__((visibility("default")))

#pragma GCC visibility push(hidden)

/* ---- the real functions (preload.c) ---------------------------------- */

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

extern struct real_fns preload_real;

static inline void *lookup(void **slot, const char *name)
{
	void *p = __atomic_load_n(slot, __ATOMIC_ACQUIRE);

	if (__builtin_expect(p == NULL, 0)) {
		p = dlsym(RTLD_NEXT, name);
		__atomic_store_n(slot, p, __ATOMIC_RELEASE);
	}
	return p;
}

/* preload_real.NAME, looked up if needed; NULL only if libc lacks it. */
#define REAL(name) ((__typeof__(preload_real.name))lookup((void **)&preload_real.name, #name))

/* Every real function looked up now. */
void lookup_all(void);


/* The kernel's clocks for libclockd's own code (see the top). The system
 * calls are the last resort of a libc without the symbol. */
int __wrap_clock_gettime(clockid_t id, struct timespec *ts);
int __wrap_clock_getres(clockid_t id, struct timespec *res);
int __wrap_clock_nanosleep(clockid_t id, int flags, const struct timespec *req, struct timespec *rem);

/* ---- which clocks ---------------------------------------------------- */

/* The clockd clock serving kernel clock @id for a read, 0 for none (no
 * clockd id is 0). The kernel's static ids are small; the table covers
 * those clockd has a match for. */
static inline clockid_t map_read(clockid_t id)
{
	static const clockid_t read_map[] = {
		[CLOCK_REALTIME] = CLOCKD_REALTIME,
		[CLOCK_MONOTONIC] = CLOCKD_MONOTONIC,
		[CLOCK_MONOTONIC_RAW] = CLOCKD_MONOTONIC_RAW,
		[CLOCK_REALTIME_COARSE] = CLOCKD_REALTIME_COARSE,
		[CLOCK_MONOTONIC_COARSE] = CLOCKD_MONOTONIC_COARSE,
		[CLOCK_TAI] = CLOCKD_TAI,
	};

	if ((uint32_t)id >= sizeof(read_map) / sizeof(read_map[0]))
		return 0;
	return read_map[id];
}

/* Sleeps and timers: the two clocks the kernel sleeps on and clockd too. */
static inline clockid_t map_sleep(clockid_t id)
{
	return id == CLOCK_REALTIME || id == CLOCK_MONOTONIC ? map_read(id) : 0;
}

/* ---- where the clocks come from (preload-mode.c) ---------------------- */

/*
 * The process is in one of these modes, for every thread at once. Only
 * MODE_CLOCKD is the hot path: one load and one compare before the clockd
 * read, as before there were other modes.
 *
 *   UNSET -> DECIDING -> CLOCKD, or KERNEL for good (no daemon at start)
 *   CLOCKD -> SWITCHING -> AWAY   a read failed: the kernel's clocks
 *   AWAY -> SWITCHING -> RETURNING  the page is live again (checked every
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

extern int preload_mode;
/* This thread holds the mode in MODE_DECIDING or MODE_SWITCHING (or is
 * taking it): a signal handler reading the clock in between must not
 * wait for itself. */
bool preload_holds_mode(void);

/* CLOCKD_PRELOAD, as set. */
enum policy policy(void);
/* Kernel clock @id in ns (libc's), 0 if it fails. */
int64_t kernel_ns(clockid_t id);
/* The mode, decided first if it is not yet. */
int current_mode(void);

/* Sleeps and timers: clockd's, or not (RETURNING is on clockd). */
static inline bool on_clockd(void)
{
	int m = __atomic_load_n(&preload_mode, __ATOMIC_ACQUIRE);

	if (__builtin_expect(m == MODE_CLOCKD, 1))
		return true;
	m = current_mode();
	return m == MODE_CLOCKD || m == MODE_RETURNING;
}

/* The errors by which libclockd says the daemon is not there (any more). */
static inline bool daemon_error(int err)
{
	return err == ENOENT || err == EACCES || err == EPROTO || err == ESTALE || err == ENAMETOOLONG;
}

/* A read in mode @from (CLOCKD or RETURNING) failed with @err, a daemon
 * error: the first thread to see it switches; the others wait for it. */
void go_away(int from, int err);

/*
 * Kernel clock @id, served by clockd clock @c, off the hot path: the first
 * call, a failed read, the reads away from clockd and while returning.
 * errno is @err again after a success.
 */
__attribute__((noinline)) int read_slow(clockid_t id, clockid_t c, struct timespec *ts, int err);

/* Kernel clock @id as clockd clock @c serves it: the hot path. */
static inline int read_clock(clockid_t id, clockid_t c, struct timespec *ts)
{
	int err = errno;

	if (__builtin_expect(__atomic_load_n(&preload_mode, __ATOMIC_ACQUIRE) == MODE_CLOCKD, 1) &&
	    __builtin_expect(clockd_clock_gettime(c, ts) == 0, 1))
		return 0;
	if (!ts) {
		errno = EFAULT;
		return -1;
	}
	return read_slow(id, c, ts, err);
}

#pragma GCC visibility pop

#endif
