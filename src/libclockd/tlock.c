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
 *
 * Blocking and unblocking are two system calls: the hot calls that POSIX
 * does not ask to be async-signal-safe (the kernel-flavoured API, delivery)
 * take the lock without them, marking the thread instead; a handler's
 * POSIX call that finds its own thread marked fails with EAGAIN
 * (lib_tlock_lock_sig) rather than wait for ever. The library's own
 * threads (delivery, reconnect) are created with every signal blocked,
 * so they never need to block them: marked once (lib_tlock_thread_masked),
 * they take the lock the fast way in every call, a callback's POSIX
 * calls included (measured: the two system calls were four of the seven
 * a delivery thread made per expiry).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>

#include "libclockd/internal.h"

static pthread_mutex_t tlock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t tcond = PTHREAD_COND_INITIALIZER;
static sigset_t held_mask; /* the holder's mask before the lock */
/* This thread holds, or is taking or leaving, the lock unmasked. */
static LIB_THREAD bool fast_held;
/* One of our threads, started with every signal blocked. */
static LIB_THREAD bool masked_thread;

void lib_tlock_thread_masked(void)
{
	masked_thread = true;
}

void lib_tlock_lock(void)
{
	sigset_t all, old;

	if (masked_thread) {
		lib_tlock_lock_fast();
		return;
	}
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	pthread_mutex_lock(&tlock);
	held_mask = old;
}

int lib_tlock_lock_sig(void)
{
	if (__atomic_load_n(&fast_held, __ATOMIC_RELAXED))
		return -EAGAIN;
	lib_tlock_lock();
	return 0;
}

void lib_tlock_lock_fast(void)
{
	/* Marked before the lock is taken, cleared after it is left: a
	 * handler that interrupts in between fails, never waits. */
	__atomic_store_n(&fast_held, true, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	pthread_mutex_lock(&tlock);
}

void lib_tlock_unlock_fast(void)
{
	pthread_mutex_unlock(&tlock);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	__atomic_store_n(&fast_held, false, __ATOMIC_RELAXED);
}

void lib_tlock_unlock(void)
{
	sigset_t old = held_mask;

	if (masked_thread) {
		lib_tlock_unlock_fast();
		return;
	}
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

/* The child of a fork() made with the lock held (conn.c's prepare
 * handler): a fresh lock, and the forking thread's mask back, as the
 * unlock would have put it; a child left with every signal blocked would
 * pass that on through exec (a daemon started so never sees SIGTERM). */
void lib_tlock_after_fork_child(void)
{
	sigset_t old = held_mask;

	pthread_mutex_init(&tlock, NULL);
	pthread_cond_init(&tcond, NULL);
	/* Forked by a callback in one of our threads: the lock was taken
	 * the fast way and its mask (all blocked) is the thread's own. */
	if (masked_thread) {
		fast_held = false;
		return;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}
