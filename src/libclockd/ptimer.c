/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * POSIX-flavoured timers (timer_create(2) and friends) on CLOCKD_MONOTONIC
 * and CLOCKD_REALTIME. A relative it_value is made absolute here, on the
 * clockd clock, at the call: the daemon always gets an absolute expiry, so
 * the delay counts from the call and clockd_timer_gettime() knows the
 * first expiry. For a periodic timer the daemon keeps the period; each FIRE
 * tells the (latest) expiry it stands for and how many more were coalesced
 * into it (the overrun).
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "libclockd/internal.h"
#include "shared/ctlproto.h"
#include "shared/timerrec.h"

#define NSEC 1000000000LL

struct clockd_posix_timer {
	struct lib_tcore core; /* first: delivery finds us from it */
	clockid_t clock;
	struct clockd_sigevent sev;
	int efd;                /* CLOCKD_SIGEV_FD */
	int64_t first_ns;       /* first expiry of the arm, clock ns */
	int64_t interval_ns;    /* 0: one-shot */
	int64_t last_ns;        /* the last expiry notified; 0: none */
	int overrun;            /* of the last expiry notified */
};

static void ptimer_note(struct lib_tcore *core, const struct timerrec *r, struct lib_ptimer_note *n);
static void ptimer_notify(struct lib_tcore *core, const struct lib_ptimer_note *n);

/* What delivery (timer.c) calls at an expiry of ours. */
static const struct lib_tkind_ops ptimer_ops = { .note = ptimer_note, .notify = ptimer_notify };

static int fail(int err)
{
	errno = err;
	return -1;
}

static int64_t ts_ns(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * NSEC + ts->tv_nsec;
}

static struct timespec ns_ts(int64_t ns)
{
	struct timespec ts = { .tv_sec = ns / NSEC, .tv_nsec = ns % NSEC };

	return ts;
}

static bool ts_valid(const struct timespec *ts)
{
	return ts->tv_sec >= 0 && ts->tv_nsec >= 0 && ts->tv_nsec < NSEC &&
	       ts->tv_sec < INT64_MAX / NSEC - 1;
}

static int check_sev(const struct clockd_sigevent *sev)
{
	switch (sev->notify) {
	case CLOCKD_SIGEV_NONE:
	case CLOCKD_SIGEV_FD:
		break;
	case CLOCKD_SIGEV_SIGNAL:
		if (sev->signo <= 0 || sev->signo >= NSIG)
			return -EINVAL;
		break;
	case CLOCKD_SIGEV_THREAD_CPU:
		if (!sev->fn)
			return -EINVAL;
		break;
	default:
		return -EINVAL;
	}
	if (sev->cpu < -1 || sev->cpu >= (int)TIMER_SHM_MAX_CPUS)
		return sev->cpu < -1 ? -EINVAL : -ENXIO;
	return 0;
}

CLOCKD_EXPORT int clockd_timer_create(clockid_t clock, const struct clockd_sigevent *sev, clockd_timer_t *timerid)
{
	struct clockd_sigevent def = { .notify = CLOCKD_SIGEV_SIGNAL, .signo = SIGALRM, .cpu = -1 };
	struct clockd_posix_timer *t;
	int err;

	if (!timerid)
		return fail(EFAULT);
	lib_tkind_register(LIB_TK_POSIX, &ptimer_ops);
	if (clock != CLOCKD_MONOTONIC && clock != CLOCKD_REALTIME)
		return fail(EINVAL);
	if (!sev)
		sev = &def;
	err = check_sev(sev);
	if (err < 0)
		return fail(-err);
	t = calloc(1, sizeof(*t));
	if (!t)
		return fail(ENOMEM);
	t->clock = clock;
	t->sev = *sev;
	t->efd = -1;
	t->core.kind = LIB_TK_POSIX;
	/* -1: the CPU of the first arm (or the lowest served), kept after. */
	t->core.cpu = sev->cpu;
	t->core.pinned = sev->cpu >= 0;
	if (sev->notify == CLOCKD_SIGEV_FD) {
		t->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (t->efd < 0) {
			err = errno;
			free(t);
			return fail(err);
		}
	}
	*timerid = t;
	return 0;
}

/* With lib_tlock held: the time left to the next expiry and the interval. */
static void get_locked(struct clockd_posix_timer *t, struct itimerspec *v)
{
	struct timespec now;
	int64_t next = t->first_ns, left = 0;

	memset(v, 0, sizeof(*v));
	if (!lib_core_pending(&t->core))
		return;
	if (clockd_clock_gettime(t->clock, &now) == 0) {
		int64_t n = ts_ns(&now);

		if (t->interval_ns && n >= next)
			next += ((n - next) / t->interval_ns + 1) * t->interval_ns;
		left = next > n ? next - n : 1;
	}
	v->it_value = ns_ts(left);
	v->it_interval = ns_ts(t->interval_ns);
}

static int arm_locked(struct clockd_posix_timer *t, int flags, const struct itimerspec *v)
{
	struct timerrec rec = { .clock = t->clock == CLOCKD_REALTIME ? CTL_CLOCK_REALTIME : CTL_CLOCK_MONOTONIC,
				.flags = CTL_ARM_ABSTIME };
	int64_t at = ts_ns(&v->it_value), period = ts_ns(&v->it_interval);
	struct timespec now;
	int err;

	if (!(flags & TIMER_ABSTIME)) {
		if (clockd_clock_gettime(t->clock, &now) < 0)
			return -errno;
		at += ts_ns(&now);
	}
	if (period) {
		rec.flags |= CTL_ARM_PERIODIC;
		rec.period = (uint64_t)period;
	}
	rec.expires = (uint64_t)at;
	err = lib_core_arm(&t->core, t->core.cpu, &rec);
	if (err < 0)
		return err;
	t->first_ns = at;
	t->interval_ns = period;
	return 0;
}

CLOCKD_EXPORT int clockd_timer_settime(clockd_timer_t t, int flags, const struct itimerspec *value,
				       struct itimerspec *old)
{
	int err;

	if (!t || !value)
		return fail(!t ? EINVAL : EFAULT);
	if ((flags & ~TIMER_ABSTIME) || !ts_valid(&value->it_value) || !ts_valid(&value->it_interval))
		return fail(EINVAL);
	if (ts_ns(&value->it_interval) != 0 && ts_ns(&value->it_interval) < CTL_MIN_PERIOD_NS)
		return fail(EINVAL);
	lib_tlock_lock();
	err = lib_core_take_err(&t->core);
	if (err) {
		lib_tlock_unlock();
		return fail(err);
	}
	if (old)
		get_locked(t, old);
	if (ts_ns(&value->it_value) == 0)
		err = lib_core_cancel(&t->core);
	else
		err = arm_locked(t, flags, value);
	lib_tlock_unlock();
	return err < 0 ? fail(-err) : 0;
}

CLOCKD_EXPORT int clockd_timer_gettime(clockd_timer_t t, struct itimerspec *value)
{
	int err;

	if (!t || !value)
		return fail(!t ? EINVAL : EFAULT);
	lib_tlock_lock();
	err = lib_core_take_err(&t->core);
	if (!err)
		get_locked(t, value);
	lib_tlock_unlock();
	return err ? fail(err) : 0;
}

CLOCKD_EXPORT int clockd_timer_getoverrun(clockd_timer_t t)
{
	int r;

	if (!t)
		return fail(EINVAL);
	lib_tlock_lock();
	r = t->overrun;
	lib_tlock_unlock();
	return r;
}

CLOCKD_EXPORT int clockd_timer_delete(clockd_timer_t t)
{
	if (!t)
		return fail(EINVAL);
	lib_tlock_lock();
	if (lib_core_in_callback(&t->core)) {
		lib_tlock_unlock();
		return fail(EDEADLK);
	}
	/* Not pending first, so that no further callback starts while we
	 * wait for the running one. */
	lib_core_cancel(&t->core);
	lib_core_wait(&t->core);
	lib_core_release(&t->core);
	lib_tlock_unlock();
	if (t->efd >= 0)
		close(t->efd);
	free(t);
	return 0;
}

CLOCKD_EXPORT int clockd_timer_fd(clockd_timer_t t)
{
	if (!t || t->efd < 0)
		return fail(EINVAL);
	return t->efd;
}

static void ptimer_note(struct lib_tcore *core, const struct timerrec *r, struct lib_ptimer_note *n)
{
	struct clockd_posix_timer *t = (struct clockd_posix_timer *)core;

	t->last_ns = (int64_t)r->expires;
	t->overrun = r->overrun > INT_MAX ? INT_MAX : (int)r->overrun;
	n->count = 1 + r->overrun;
	n->expires = (int64_t)r->expires;
}

/* The daemon hands ns expiries over up to its lead early (timerrec.h):
 * wait out the rest on the timer's own clock, spinning the last stretch,
 * so that nothing is notified before its expiry. */
static void wait_expiry(const struct clockd_posix_timer *t, int64_t expires)
{
	struct timespec at = { .tv_sec = (time_t)(expires / 1000000000), .tv_nsec = (long)(expires % 1000000000) };

	while (clockd_clock_nanosleep(t->clock, TIMER_ABSTIME, &at, NULL) == EINTR)
		;
}

static void ptimer_notify(struct lib_tcore *core, const struct lib_ptimer_note *n)
{
	struct clockd_posix_timer *t = (struct clockd_posix_timer *)core;

	if (t->sev.notify != CLOCKD_SIGEV_NONE)
		wait_expiry(t, n->expires);
	switch (t->sev.notify) {
	case CLOCKD_SIGEV_SIGNAL:
		sigqueue(getpid(), t->sev.signo, t->sev.value);
		break;
	case CLOCKD_SIGEV_THREAD_CPU:
		t->sev.fn(t->sev.value);
		break;
	case CLOCKD_SIGEV_FD:
		if (write(t->efd, &n->count, sizeof(n->count)) < 0)
			break; /* a full counter: the reader is far behind */
		break;
	default:
		break;
	}
}
