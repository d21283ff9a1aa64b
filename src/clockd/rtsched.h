/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The real-time scheduling of the daemon's own threads (the tick thread,
 * the timer-base threads): SCHED_FIFO at the configured priorities when
 * this process may use them, SCHED_OTHER otherwise. The kernel expires its
 * timers in interrupt context; these threads are the daemon's.
 *
 * Called once at start, after privileges are dropped (capabilities are
 * per thread and the threads inherit the main thread's) and before any of
 * those threads starts.
 */
#ifndef CLOCKD_RTSCHED_H
#define CLOCKD_RTSCHED_H

#include <stdint.h>

struct rtsched_prio {
	uint32_t tick;  /* tick_priority: 0 SCHED_OTHER, 1..99 SCHED_FIFO */
	uint32_t timer; /* timer_priority: likewise, for every timer base */
};

/*
 * Try each priority above 0 of @p on a short-lived thread of this process
 * (pthread_setschedparam, SCHED_FIFO). A priority the process may not use
 * (EPERM: no CAP_SYS_NICE and an RLIMIT_RTPRIO below it) becomes 0, and
 * one warning line says which threads run SCHED_OTHER and why. Never
 * fails: the daemon runs either way.
 */
void rtsched_settle(struct rtsched_prio *p);

/*
 * The calling thread at SCHED_FIFO @prio (nothing for 0), for @who in the
 * message ("the tick thread", "timer base 3"). After rtsched_settle this
 * succeeds; if it fails all the same (a limit changed meanwhile), it logs
 * one line and the thread runs SCHED_OTHER: 0 or -1, never fatal.
 */
int rtsched_apply(uint32_t prio, const char *who);

#endif
