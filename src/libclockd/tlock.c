/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lib_tlock: the one lock of the timer state (internal.h). It guards the
 * connection pointer, the id table and every timer's state, so that the
 * order of records in a ring is the order of the state changes; timer
 * callbacks run without it. Its condition variable is broadcast when a
 * callback ends or a connection is lost.
 *
 * Async-signal safety: POSIX lets a signal handler call timer_settime(),
 * timer_gettime() and timer_getoverrun(), which take this lock. A handler
 * that interrupted its own thread inside a section under the lock would
 * wait for ever on itself (and the delivery threads behind it). So every
 * signal is blocked while the lock is held: a handler never runs in a
 * thread that holds it. The mask from before is kept beside the lock (one
 * holder at a time) and put back at the unlock.
 */
#include <pthread.h>
#include <signal.h>

#include "libclockd/internal.h"

static pthread_mutex_t tlock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t tcond = PTHREAD_COND_INITIALIZER;
static sigset_t held_mask; /* the holder's mask before the lock */

void lib_tlock_lock(void)
{
	sigset_t all, old;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	pthread_mutex_lock(&tlock);
	held_mask = old;
}

void lib_tlock_unlock(void)
{
	sigset_t old = held_mask;

	pthread_mutex_unlock(&tlock);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void lib_tlock_wait(void)
{
	/* Another holder may keep its own mask here meanwhile. */
	sigset_t mine = held_mask;

	pthread_cond_wait(&tcond, &tlock);
	held_mask = mine;
}

void lib_tlock_broadcast(void)
{
	pthread_cond_broadcast(&tcond);
}

void lib_tlock_after_fork_child(void)
{
	pthread_mutex_init(&tlock, NULL);
	pthread_cond_init(&tcond, NULL);
}
