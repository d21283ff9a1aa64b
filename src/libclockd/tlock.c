/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lib_tlock: the one lock of the timer state (internal.h). It guards the
 * connection pointer, the id table and every timer's state, so that the
 * order of records in a ring is the order of the state changes; timer
 * callbacks run without it. Its condition variable is broadcast when a
 * callback ends or a connection is lost.
 */
#include <pthread.h>

#include "libclockd/internal.h"

static pthread_mutex_t tlock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t tcond = PTHREAD_COND_INITIALIZER;

void lib_tlock_lock(void)
{
	pthread_mutex_lock(&tlock);
}

void lib_tlock_unlock(void)
{
	pthread_mutex_unlock(&tlock);
}

void lib_tlock_wait(void)
{
	pthread_cond_wait(&tcond, &tlock);
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
