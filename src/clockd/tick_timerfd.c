/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * timerfd: the default tick. One-shot, armed for each tick's absolute
 * deadline on CLOCK_MONOTONIC, so HZ values that do not divide 1e9 (1024,
 * 1200) get no accumulated drift: the timekeeper computes every deadline
 * from the tick number.
 */
#include <errno.h>
#include <stdint.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "clockd/tick.h"
#include "shared/log.h"
#include "shared/tickmath.h"

static int timerfd_init(struct tick_device *td, const struct clockd_config *cfg)
{
	td->fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (td->fd < 0) {
		log_warn("tick timerfd: timerfd_create");
		return -1;
	}
	return 0;
}

static int timerfd_arm(struct tick_device *td, int64_t deadline_ns)
{
	struct itimerspec its = { .it_value = ns_to_ts(deadline_ns) };

	if (timerfd_settime(td->fd, TFD_TIMER_ABSTIME, &its, NULL) < 0) {
		log_warn("tick timerfd: timerfd_settime");
		return -1;
	}
	return 0;
}

static int64_t timerfd_ack(struct tick_device *td)
{
	uint64_t n;
	ssize_t r = read(td->fd, &n, sizeof(n));

	if (r == sizeof(n))
		return (int64_t)n;
	if (r < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	log_warn("tick timerfd: read");
	return -1;
}

static void timerfd_fini(struct tick_device *td)
{
	if (td->fd >= 0)
		close(td->fd);
	td->fd = -1;
}

const struct tick_ops tick_timerfd = {
	.name = "timerfd",
	.descr = "a kernel timerfd on CLOCK_MONOTONIC, armed for each tick",
	.oneshot = true,
	.init = timerfd_init,
	.arm = timerfd_arm,
	.ack = timerfd_ack,
	.fini = timerfd_fini,
};
