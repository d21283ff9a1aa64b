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
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "libclockd/internal.h"
#include "shared/ctlproto.h"
#include "shared/timerrec.h"

#define NSEC 1000000000LL

struct clockd_posix_timer {
	struct lib_tcore core; /* first: delivery finds us from it */
	clockid_t clock;
	clockid_t base;         /* the arm's clock: CLOCKD_MONOTONIC if relative */
	struct clockd_sigevent sev;
	int efd;                /* CLOCKD_SIGEV_FD */
	int64_t first_ns;       /* first expiry of the arm, base ns */
	int64_t interval_ns;    /* 0: one-shot */
	int64_t last_ns;        /* the last expiry notified; 0: none */
	int overrun;            /* of the last expiry notified; CLOCKD_SIGEV_SIGNAL:
				 * of the last signal taken (settle_taken) */
	int overrun_sent;       /* CLOCKD_SIGEV_SIGNAL: of the one sent, so far */
	uint64_t counted;       /* expiries of this arm notified or overrun */
	bool queued;            /* CLOCKD_SIGEV_SIGNAL: one was sent, not yet
				 * seen taken */
	int sigid;              /* its signals' si_timerid */
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
	/* The namespace's offsets are read with the page's path: before
	 * an absolute monotonic expiry is converted (arm_locked). */
	(void)lib_page_path();
	t->clock = clock;
	t->base = clock;
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
	/* One of the user's max_timers_per_user, now: POSIX's EAGAIN. */
	lib_tlock_lock();
	err = lib_core_claim();
	lib_tlock_unlock();
	if (err < 0) {
		if (t->efd >= 0)
			close(t->efd);
		free(t);
		return fail(-err);
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
	if (clockd_clock_gettime(t->base, &now) == 0) {
		int64_t n = ts_ns(&now);

		if (t->interval_ns && n >= next)
			next += ((n - next) / t->interval_ns + 1) * t->interval_ns;
		left = next > n ? next - n : 1;
	}
	v->it_value = ns_ts(left);
	v->it_interval = ns_ts(t->interval_ns);
}

static int64_t now_ns(clockid_t id)
{
	struct timespec ts;

	return clockd_clock_gettime(id, &ts) == 0 ? ts_ns(&ts) : INT64_MIN;
}

/*
 * The delivery thread may sleep until expiry @at on clock @base
 * (lib_conn_expect: on CLOCKD_MONOTONIC, the daemon's namespace). A
 * realtime one is taken there at the clocks' offset now; a step of the
 * date meanwhile costs a wake-up by the daemon (its expire_heap).
 */
static void expect(clockid_t base, int64_t at)
{
	int64_t r, m;

	if (base == CLOCKD_MONOTONIC) {
		lib_conn_expect(at);
		return;
	}
	r = now_ns(CLOCKD_REALTIME);
	m = now_ns(CLOCKD_MONOTONIC);
	if (r != INT64_MIN && m != INT64_MIN)
		lib_conn_expect(at - r + m - lib_timens_mono_ns());
}

/*
 * A relative timer measures elapsed time: it runs on CLOCKD_MONOTONIC
 * whatever its clock, period included, as the kernel puts a relative
 * CLOCK_REALTIME hrtimer on its monotonic base, so that no step of the
 * date moves it; an absolute realtime one follows the date. A monotonic
 * expiry goes to the daemon in the initial time namespace's terms.
 */
static int arm_locked(struct clockd_posix_timer *t, int flags, const struct itimerspec *v)
{
	clockid_t base = flags & TIMER_ABSTIME ? t->clock : CLOCKD_MONOTONIC;
	struct timerrec rec = { .clock = base == CLOCKD_REALTIME ? CTL_CLOCK_REALTIME : CTL_CLOCK_MONOTONIC,
				.flags = CTL_ARM_ABSTIME | CTL_ARM_RESERVED };
	int64_t at = ts_ns(&v->it_value), period = ts_ns(&v->it_interval);
	struct timespec now;
	int err;

	if (!(flags & TIMER_ABSTIME)) {
		/* Connected first: a daemon that is starting (its socket is
		 * bound before its page is live) answers once the page is
		 * live, so the clock is read then, not failed with ENOENT or
		 * ESTALE, which timer_settime does not have. */
		err = lib_core_connect();
		if (err < 0)
			return err;
		if (clockd_clock_gettime(base, &now) < 0)
			return -errno;
		at += ts_ns(&now);
	}
	/* The kernel rounds an interval up to its resolution; ours is the
	 * protocol's shortest period. */
	if (period && period < CTL_MIN_PERIOD_NS)
		period = CTL_MIN_PERIOD_NS;
	if (period) {
		rec.flags |= CTL_ARM_PERIODIC;
		rec.period = (uint64_t)period;
	}
	rec.expires = (uint64_t)(base == CLOCKD_MONOTONIC ? at - lib_timens_mono_ns() : at);
	err = lib_core_arm(&t->core, t->core.cpu, &rec);
	if (err < 0)
		return err;
	/* Armed from a callback (a one-shot re-armed, the common idiom): the
	 * delivery thread may sleep until it, as for a period. */
	expect(base, (int64_t)rec.expires);
	t->base = base;
	t->first_ns = at;
	t->interval_ns = period;
	t->counted = 0;
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
	if (lib_tlock_lock_sig() < 0)
		return fail(EAGAIN);
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
	if (lib_tlock_lock_sig() < 0)
		return fail(EAGAIN);
	err = lib_core_take_err(&t->core);
	if (!err)
		get_locked(t, value);
	lib_tlock_unlock();
	return err ? fail(err) : 0;
}

static void settle_taken(struct clockd_posix_timer *t);

CLOCKD_EXPORT int clockd_timer_getoverrun(clockd_timer_t t)
{
	int r;

	if (!t)
		return fail(EINVAL);
	if (lib_tlock_lock_sig() < 0)
		return fail(EAGAIN);
	if (t->sev.notify == CLOCKD_SIGEV_SIGNAL)
		settle_taken(t);
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
	 * wait for the running one; that one runs unlocked and may arm the
	 * timer again: cancelled again then, until it neither runs nor is
	 * pending (as clockd_del_timer_sync()). Freed while still pending,
	 * its id would name freed memory to the next expiry. */
	lib_core_cancel(&t->core);
	while (lib_core_wait(&t->core) == 0 && lib_core_pending(&t->core))
		lib_core_cancel(&t->core);
	lib_core_release(&t->core);
	lib_core_unclaim();
	lib_tlock_unlock();
	if (t->efd >= 0)
		close(t->efd);
	free(t);
	return 0;
}

void lib_ptimer_set_sigid(clockd_timer_t t, int id)
{
	t->sigid = id;
}

CLOCKD_EXPORT int clockd_timer_fd(clockd_timer_t t)
{
	if (!t || t->efd < 0)
		return fail(EINVAL);
	return t->efd;
}

/*
 * The expiries an expiry at @e (the arm's clock, as first_ns) with the
 * daemon's @overrun stands for, in the timer's own
 * periods: the daemon runs a period under its timer_min_period_us at that
 * minimum and counts its overruns in it, but POSIX counts the timer's own
 * (a 1 us timer due 2500 s ago has 2.5e9 expiries, an overrun of INT_MAX).
 */
static uint64_t expiries(struct clockd_posix_timer *t, int64_t e, uint64_t overrun)
{
	uint64_t total, n;

	if (t->interval_ns <= 0 || e < t->first_ns)
		return 1 + overrun;
	total = (uint64_t)(e - t->first_ns) / (uint64_t)t->interval_ns + 1;
	n = total > t->counted ? total - t->counted : 1;
	t->counted = total > t->counted ? total : t->counted + 1;
	return n;
}

static void ptimer_note(struct lib_tcore *core, const struct timerrec *r, struct lib_ptimer_note *n)
{
	struct clockd_posix_timer *t = (struct clockd_posix_timer *)core;
	int64_t at = (int64_t)r->expires;

	if (t->base == CLOCKD_MONOTONIC) /* back in the process's namespace */
		at += lib_timens_mono_ns();
	if (t->interval_ns > 0 && r->expires <= (uint64_t)(INT64_MAX - t->interval_ns))
		expect(t->base, (int64_t)r->expires + t->interval_ns);
	t->last_ns = at;
	n->count = expiries(t, at, r->overrun);
	n->expires = at;
	n->clock = t->base;
	/* A signal's overrun is settled when it is taken (settle_taken). */
	if (t->sev.notify != CLOCKD_SIGEV_SIGNAL)
		t->overrun = n->count - 1 > INT_MAX ? INT_MAX : (int)(n->count - 1);
}

/*
 * POSIX: at most one signal of a timer is queued; expiries while it is
 * pending are overruns. timer_getoverrun() tells those of the signal
 * taken last (delivered or accepted), as the kernel's does: not those of
 * one sent since and still pending, whose overrun is kept apart
 * (overrun_sent) until it is seen taken. Whether the one sent is still
 * pending is the process's pending set, read under lib_tlock, where the
 * reader blocks every signal (sigpending() gives the blocked ones): a
 * signal of the same number from elsewhere pending too counts as ours.
 */
static void settle_taken(struct clockd_posix_timer *t)
{
	sigset_t pend;

	sigemptyset(&pend);
	if (t->queued && !(sigpending(&pend) == 0 && sigismember(&pend, t->sev.signo) == 1)) {
		t->overrun = t->overrun_sent;
		t->queued = false;
	}
}

/*
 * The signal is sent as the kernel sends it, si_code SI_TIMER with
 * si_overrun, under the lock: a handler that takes it at once and asks
 * timer_getoverrun() waits for the lock and finds it queued, so taken.
 */
static void ptimer_signal(struct clockd_posix_timer *t, uint64_t count)
{
	siginfo_t si;
	int over;

	lib_tlock_lock_fast();
	settle_taken(t);
	if (t->queued) {
		uint64_t sum = (uint64_t)t->overrun_sent + count;

		t->overrun_sent = sum > INT_MAX ? INT_MAX : (int)sum;
		lib_tlock_unlock_fast();
		return;
	}
	over = count - 1 > INT_MAX ? INT_MAX : (int)(count - 1);
	t->overrun_sent = over;
	t->queued = true;
	memset(&si, 0, sizeof(si));
	si.si_signo = t->sev.signo;
	si.si_code = SI_TIMER;
	si.si_value = t->sev.value;
	si.si_overrun = over;
	si.si_timerid = t->sigid;
	if (syscall(SYS_rt_sigqueueinfo, getpid(), t->sev.signo, &si) != 0)
		sigqueue(getpid(), t->sev.signo, t->sev.value);
	lib_tlock_unlock_fast();
}

/*
 * The daemon hands ns expiries over up to its lead early (timerrec.h):
 * wait until the arm's clock @base reads @expires, so that nothing is
 * notified before its expiry, but never longer than the longest lead a
 * daemon may have (TIMERREC_LEAD_MAX_NS) and one step of the clock as this
 * process reads it (a tick, when it cannot read the counter) of
 * CLOCKD_MONOTONIC: a realtime clock stepped back meanwhile would
 * otherwise hold this delivery thread, and every timer it serves, for
 * the whole step.
 */
/*
 * How a thread waits out the lead: a real-time one spins its last 50 us
 * (clockd_clock_nanosleep), which is what the lead buys; a SCHED_OTHER
 * delivery thread sleeps (lib_wait_asleep): spinning, it was cut for a
 * whole time slice of a busy loop beside it often enough to put its p99
 * at 0.5-0.8 ms. It sleeps only with a timer slack of 1 us or less (the
 * library's delivery threads set 1 ns): an application's thread running
 * clockd_dispatch() has its own, 50 us by default, which would make the
 * callback that late; it spins, as before. Read once per thread (a
 * delivery thread keeps what it was made with).
 */
static bool thread_sleeps_lead(void)
{
	static LIB_THREAD int sleeps = -1;

	if (sleeps < 0) {
		int policy = sched_getscheduler(0);
		int slack = prctl(PR_GET_TIMERSLACK, 0UL, 0UL, 0UL, 0UL);

		sleeps = !lib_policy_realtime(policy) && slack >= 0 && slack <= 1000;
	}
	return sleeps;
}

static void wait_expiry(clockid_t base, int64_t expires)
{
	int64_t now = now_ns(base), end, m;
	struct timespec res;

	/* Due already, as all but the first of a round's records are: one
	 * read of the clock. */
	if (now == INT64_MIN || now >= expires)
		return;
	end = now_ns(CLOCKD_MONOTONIC);
	if (end == INT64_MIN)
		return;
	end += TIMERREC_LEAD_MAX_NS;
	if (clockd_clock_getres(base, &res) == 0 && res.tv_sec == 0)
		end += res.tv_nsec;
	for (;;) {
		now = now_ns(base);
		m = now_ns(CLOCKD_MONOTONIC);
		if (now == INT64_MIN || now >= expires || m == INT64_MIN || m >= end)
			return;
		m = expires - now < end - m ? m + (expires - now) : end;
		struct timespec at = ns_ts(m);

		if (thread_sleeps_lead())
			lib_wait_asleep(CLOCKD_MONOTONIC, m);
		else
			(void)clockd_clock_nanosleep(CLOCKD_MONOTONIC, TIMER_ABSTIME, &at, NULL);
	}
}

static void ptimer_notify(struct lib_tcore *core, const struct lib_ptimer_note *n)
{
	struct clockd_posix_timer *t = (struct clockd_posix_timer *)core;

	if (t->sev.notify != CLOCKD_SIGEV_NONE)
		wait_expiry(n->clock, n->expires);
	switch (t->sev.notify) {
	case CLOCKD_SIGEV_SIGNAL:
		ptimer_signal(t, n->count);
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
