/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * timerfd: the default tick. A periodic timerfd on CLOCK_MONOTONIC, read
 * with a blocking read(): one system call per tick. The period is
 * floor(1e9 / hz) ns; when the kernel's schedule drifts from the
 * timekeeper's exact deadline (HZ=1024: half a ns a tick; or the small rate
 * difference between clockd's clock and the kernel's) by more than
 * REPHASE_NS, the timer is re-armed at the exact deadline. So every tick
 * fires within REPHASE_NS of tick k's exact time, epoch + floor(k*1e9/hz).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "clockd/ticks/tick.h"
#include "shared/log.h"
#include "shared/tickmath.h"

#define REPHASE_NS 2000

struct timerfd_state {
	int64_t period_ns;
	int64_t next_ns; /* the kernel's next expiry, 0 if not armed */
	struct log_repeat errs; /* a failing timerfd logs once per run */
};

static int timerfd_init(struct tick_device *td, const struct tick_params *p)
{
	struct timerfd_state *st = calloc(1, sizeof(*st));

	if (!st) {
		log_warn("tick timerfd");
		return -1;
	}
	td->fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	if (td->fd < 0) {
		log_warn("tick timerfd: timerfd_create");
		free(st);
		return -1;
	}
	st->period_ns = (int64_t)(NSEC_PER_SEC / p->hz);
	snprintf(td->device, sizeof(td->device), "kernel timerfd, CLOCK_MONOTONIC");
	td->priv = st;
	return 0;
}

static int timerfd_arm(struct tick_device *td, struct timerfd_state *st, int64_t deadline_ns)
{
	struct itimerspec its = {
		.it_value = ns_to_ts(deadline_ns),
		.it_interval = ns_to_ts(st->period_ns),
	};

	if (timerfd_settime(td->fd, TFD_TIMER_ABSTIME, &its, NULL) < 0) {
		log_repeat(&st->errs, LOG_WARNING, true, "tick timerfd: timerfd_settime");
		st->next_ns = 0;
		return -1;
	}
	st->next_ns = deadline_ns;
	return 0;
}

static int64_t timerfd_wait(struct tick_device *td, int64_t deadline_ns)
{
	struct timerfd_state *st = td->priv;
	struct timespec now;
	uint64_t n;
	ssize_t r;

	/* A deadline already past keeps the timer's own period: the
	 * timekeeper did not move (a faulted source on probation gives the
	 * same deadline tick after tick), and arming at it again would fire
	 * at once, for ever: a SCHED_FIFO thread spinning on its CPU, with
	 * the timer base pinned there starved. A tick merely late finds its
	 * expirations waiting on the armed timer. */
	if (st->next_ns != 0 && clock_gettime(CLOCK_MONOTONIC, &now) == 0 && deadline_ns <= ts_to_ns(&now))
		deadline_ns = st->next_ns;
	if (st->next_ns == 0 || llabs(st->next_ns - deadline_ns) > REPHASE_NS)
		if (timerfd_arm(td, st, deadline_ns) < 0)
			return -1;
	r = read(td->fd, &n, sizeof(n));
	if (r == sizeof(n)) {
		log_repeat_end(&st->errs, "tick timerfd: ticking again");
		st->next_ns += (int64_t)n * st->period_ns;
		return (int64_t)n;
	}
	if (r < 0 && errno == EINTR)
		return 0;
	log_repeat(&st->errs, LOG_WARNING, true, "tick timerfd: read");
	st->next_ns = 0;
	return -1;
}

static void timerfd_fini(struct tick_device *td)
{
	if (td->fd >= 0)
		close(td->fd);
	td->fd = -1;
	free(td->priv);
	td->priv = NULL;
}

const struct tick_ops tick_timerfd = {
	.name = "timerfd",
	.descr = "a periodic kernel timerfd on CLOCK_MONOTONIC, kept in phase with the exact tick times",
	.init = timerfd_init,
	.wait = timerfd_wait,
	.fini = timerfd_fini,
};
