/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Stopping a device thread: the tick and reference threads block in device
 * system calls (read, poll, clock_nanosleep). A stop sets the thread's own
 * stop flag, then interrupts the call with WAKEUP_SIG (its handler does
 * nothing, and is installed without SA_RESTART, so the call returns EINTR)
 * until the thread has left. Not pthread_cancel: a thread always leaves
 * through its own code, releasing what it holds.
 */
#ifndef CLOCKD_WAKEUP_H
#define CLOCKD_WAKEUP_H

#include <pthread.h>
#include <signal.h>

#define WAKEUP_SIG SIGRTMIN

/* Install the handler (once, before the first device thread starts).
 * 0, or -1 after logging why. */
int wakeup_install(void);
/* In a device thread: block every signal but WAKEUP_SIG (the main thread
 * handles the rest). */
void wakeup_thread_mask(void);
/* Interrupt @thread until it ends, and join it. */
void wakeup_join(pthread_t thread);

#endif
