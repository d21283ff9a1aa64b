/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Delivery threads' scheduling (libclockd(3), "Timers"): a timer's
 * callback runs at the policy and priority of the thread that armed the
 * first timer on its CPU in this process.
 *  - a SCHED_OTHER thread arms the first timer on one CPU: its callback
 *    runs SCHED_OTHER;
 *  - a SCHED_FIFO 7 thread arms the first timer on another CPU: its
 *    callback runs SCHED_FIFO 7 (needs CAP_SYS_NICE or RLIMIT_RTPRIO and
 *    two CPUs; skipped otherwise), and a later SCHED_OTHER arm on that
 *    CPU does not change it;
 *  - a SCHED_IDLE process (a policy a thread cannot be created with
 *    explicitly) arms the first timer: its callback runs SCHED_OTHER, or,
 *    where the process may not leave SCHED_IDLE (unprivileged, with an
 *    RLIMIT_NICE below 20), SCHED_IDLE: the caller's own policy, rather
 *    than no callback.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <clockd/clockd.h>
#include "tests/libtimers/daemon.h"
#include "tests/tap.h"

#define WAIT_NS 10000000000LL

struct seen {
	uint64_t done;
	int policy, prio;
};

static void record(struct clockd_timer *t, void *arg)
{
	struct seen *s = arg;
	struct sched_param sp;

	(void)t;
	/* The kernel's word: glibc's pthread_getschedparam() would give the
	 * policy it cached, which an inherited one need not be. */
	s->policy = sched_getscheduler(0);
	sched_getparam(0, &sp);
	s->prio = sp.sched_priority;
	__atomic_store_n(&s->done, 1, __ATOMIC_RELEASE);
}

/* Arm a jiffies timer on @cpu from this thread; what its callback saw. */
static bool fire_on(unsigned cpu, struct seen *s)
{
	struct clockd_timer t;

	memset(s, 0, sizeof(*s));
	clockd_timer_setup(&t, record, s);
	if (clockd_add_timer_on(&t, clockd_get_jiffies_64() + 1, cpu) != 0) {
		tap_diag("clockd_add_timer_on CPU %u: %s", cpu, strerror(errno));
		return false;
	}
	return td_wait_u64(&s->done, 1, WAIT_NS);
}

struct fifo_arm {
	unsigned cpu;
	struct seen s;
	bool fired;
};

static void *fifo_main(void *arg)
{
	struct fifo_arm *f = arg;

	f->fired = fire_on(f->cpu, &f->s);
	return NULL;
}

/* Whether a SCHED_IDLE thread may create a SCHED_OTHER one. */
static void *nothing(void *arg)
{
	return arg;
}

static bool idle_may_leave(void)
{
	pthread_attr_t attr;
	pthread_t th;
	int err;

	pthread_attr_init(&attr);
	pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
	pthread_attr_setschedpolicy(&attr, SCHED_OTHER);
	pthread_attr_setschedparam(&attr, &(struct sched_param){ .sched_priority = 0 });
	err = pthread_create(&th, &attr, nothing, NULL);
	pthread_attr_destroy(&attr);
	if (err == 0)
		pthread_join(th, NULL);
	return err == 0;
}

/* In a child (its own connection), SCHED_IDLE: the exit status is 0 if
 * the callback ran SCHED_OTHER, 4 if it ran SCHED_IDLE where the child may
 * not leave it, 1 if under another policy, 2 if it did not run, 3 if
 * SCHED_IDLE could not be set. */
static int idle_child(unsigned cpu)
{
	struct sched_param sp = { .sched_priority = 0 };
	struct seen s;
	pid_t pid = fork();
	int st;

	if (pid < 0)
		tap_bail("fork: %s", strerror(errno));
	if (pid == 0) {
		bool may_leave;

		if (sched_setscheduler(0, SCHED_IDLE, &sp) < 0)
			_exit(3);
		may_leave = idle_may_leave();
		if (!fire_on(cpu, &s))
			_exit(2);
		if (!may_leave)
			_exit(s.policy == SCHED_IDLE ? 4 : 1);
		_exit(s.policy == SCHED_OTHER && s.prio == 0 ? 0 : 1);
	}
	if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

int main(void)
{
	uint64_t cpus;
	unsigned a = 64, b = 64;
	struct sched_param sp = { .sched_priority = 7 };
	struct fifo_arm f = { 0 };
	pthread_attr_t attr;
	pthread_t th;
	struct seen s;
	bool ok;
	int err, r;

	tap_plan(4);
	td_init();
	td_start(NULL);
	cpus = td_cpus();
	for (unsigned c = 0; c < 64; c++) {
		if (!(cpus >> c & 1))
			continue;
		if (a == 64)
			a = c;
		else if (b == 64)
			b = c;
	}
	ok = fire_on(a, &s);
	tap_ok(ok && s.policy == SCHED_OTHER && s.prio == 0,
	       "armed by a SCHED_OTHER thread: the callback on CPU %u runs SCHED_OTHER (policy %d, priority %d)", a,
	       s.policy, s.prio);
	r = idle_child(a);
	if (r == 4)
		tap_ok(true, "armed first by a SCHED_IDLE process that may not leave SCHED_IDLE (unprivileged, "
			     "RLIMIT_NICE): the callback runs SCHED_IDLE, its caller's policy");
	else
		tap_ok(r == 0, "armed first by a SCHED_IDLE process: the callback runs SCHED_OTHER (child status %d)",
		       r);
	if (b == 64) {
		tap_skip("one CPU only: no second pair for a SCHED_FIFO arm");
		tap_skip("one CPU only");
		return tap_done();
	}
	pthread_attr_init(&attr);
	pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
	pthread_attr_setschedpolicy(&attr, SCHED_FIFO);
	pthread_attr_setschedparam(&attr, &sp);
	f.cpu = b;
	err = pthread_create(&th, &attr, fifo_main, &f);
	pthread_attr_destroy(&attr);
	if (err == EPERM) {
		tap_skip("SCHED_FIFO not permitted here (no CAP_SYS_NICE, RLIMIT_RTPRIO below 7)");
		tap_skip("SCHED_FIFO not permitted here");
		return tap_done();
	}
	if (err)
		tap_bail("pthread_create: %s", strerror(err));
	pthread_join(th, NULL);
	tap_ok(f.fired && f.s.policy == SCHED_FIFO && f.s.prio == 7,
	       "armed first by a SCHED_FIFO 7 thread: the callback on CPU %u runs SCHED_FIFO 7 (policy %d, priority %d)",
	       b, f.s.policy, f.s.prio);
	ok = fire_on(b, &s);
	tap_ok(ok && s.policy == SCHED_FIFO && s.prio == 7,
	       "a later arm there from a SCHED_OTHER thread leaves it so (policy %d, priority %d)", s.policy, s.prio);
	return tap_done();
}
