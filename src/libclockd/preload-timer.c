/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libclockd-preload.so: the POSIX timer interposers (timer_*) and their id
 * tables. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "libclockd/internal.h"
#include "libclockd/preload.h"
#include "shared/tickmath.h"


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
	/* The kernel's si_timerid is its id for the timer: ours, as an int
	 * (the slot; OWN_BASE's low 32 bits are zero). */
	lib_ptimer_set_sigid(t, slot);
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

	if (t) {
		if (clockd_timer_settime(t, flags, value, old) == 0)
			return 0;
		/* timer_settime fails with EINVAL (and Linux's EFAULT) only:
		 * what clockd adds (no daemon to take the timer, a quota, a
		 * lost connection) is a resource it lacks, EAGAIN. */
		if (errno != EINVAL && errno != EFAULT)
			errno = EAGAIN;
		return -1;
	}
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
