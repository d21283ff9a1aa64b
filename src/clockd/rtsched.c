/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* SCHED_FIFO for the daemon's threads, or SCHED_OTHER with one notice
 * (rtsched.h). */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "clockd/rtsched.h"
#include "shared/log.h"

/* The probe runs on a thread of its own: the main thread's scheduling
 * (inherited by every thread it starts later) stays untouched. */
static void *probe_main(void *arg)
{
	int *prio = arg;
	struct sched_param sp = { .sched_priority = *prio };

	*prio = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
	return NULL;
}

/* 0 if a thread of this process may run SCHED_FIFO at @prio, else the
 * error (EPERM, ...). */
static int probe(uint32_t prio)
{
	int r = (int)prio;
	pthread_t th;
	int err;

	if (prio == 0)
		return 0;
	err = pthread_create(&th, NULL, probe_main, &r);
	if (err)
		return err;
	pthread_join(th, NULL);
	return r;
}

/* "RLIMIT_RTPRIO 0" or "RLIMIT_RTPRIO unlimited", for the message. */
static void rtprio_text(char *buf, size_t len)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_RTPRIO, &rl) < 0)
		snprintf(buf, len, "RLIMIT_RTPRIO unknown");
	else if (rl.rlim_cur == RLIM_INFINITY)
		snprintf(buf, len, "RLIMIT_RTPRIO unlimited");
	else
		snprintf(buf, len, "RLIMIT_RTPRIO %llu", (unsigned long long)rl.rlim_cur);
}

void rtsched_settle(struct rtsched_prio *p)
{
	int tick = probe(p->tick), timer = probe(p->timer), err = tick ? tick : timer;
	char who[128], lim[40];

	if (!tick && !timer) {
		if (p->tick || p->timer)
			log_info("scheduling: SCHED_FIFO, tick thread at %u, timer threads at %u (0: SCHED_OTHER)",
				 p->tick, p->timer);
		return;
	}
	if (tick && timer)
		snprintf(who, sizeof(who), "the tick thread (tick_priority %u) and the timer threads "
			 "(timer_priority %u) run", p->tick, p->timer);
	else if (tick)
		snprintf(who, sizeof(who), "the tick thread (tick_priority %u) runs", p->tick);
	else
		snprintf(who, sizeof(who), "the timer threads (timer_priority %u) run", p->timer);
	rtprio_text(lim, sizeof(lim));
	if (err == EPERM)
		log_warnx("scheduling: SCHED_FIFO not permitted (no CAP_SYS_NICE, %s): %s SCHED_OTHER "
			  "instead; ticks and timers may be late while the CPUs are busy", lim, who);
	else
		log_warnx("scheduling: SCHED_FIFO refused (%s): %s SCHED_OTHER instead; ticks and "
			  "timers may be late while the CPUs are busy", strerror(err), who);
	if (tick)
		p->tick = 0;
	if (timer)
		p->timer = 0;
}

int rtsched_apply(uint32_t prio, const char *who)
{
	struct sched_param sp = { .sched_priority = (int)prio };
	int r;

	if (prio == 0)
		return 0;
	r = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
	if (r == 0)
		return 0;
	log_warnx("scheduling: %s: SCHED_FIFO priority %u refused (%s); it runs SCHED_OTHER", who, prio,
		  strerror(r));
	return -1;
}
