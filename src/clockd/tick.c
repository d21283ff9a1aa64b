/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

#include "clockd/tick.h"
#include "shared/log.h"
#include "shared/tickmath.h"

const struct tick_ops *const tick_drivers[] = {
	&tick_timerfd,
	&tick_hpet,
	&tick_rtc,
#ifdef HAVE_LIBGPIOD
	&tick_gpio,
#endif
	&tick_sim,
	NULL,
};

const struct tick_ops *tick_find(const char *name)
{
	for (size_t i = 0; tick_drivers[i]; i++)
		if (strcmp(tick_drivers[i]->name, name) == 0)
			return tick_drivers[i];
	return NULL;
}

int tick_open(struct tick_device *td, const struct tick_ops *ops, const struct clockd_config *cfg)
{
	memset(td, 0, sizeof(*td));
	td->fd = -1;
	td->ops = ops;
	td->hz = cfg->hz;
	td->stall_ns = (int64_t)cfg->stall_ticks * (int64_t)tick_period_ns_ceil(cfg->hz);
	if (ops->init(td, cfg) < 0) {
		td->ops = NULL;
		return -1;
	}
	log_info("tick %s%s%s: %u Hz%s", ops->name, td->device[0] ? " " : "", td->device, td->hz,
		 td->self_paced ? ", jiffies count its ticks" : "");
	return 0;
}

int64_t tick_wait_read(struct tick_device *td, unsigned long *data)
{
	struct pollfd pfd = { .fd = td->fd, .events = POLLIN };
	int64_t ms = (td->stall_ns + 999999) / 1000000;
	ssize_t r;
	int p;

	p = poll(&pfd, 1, ms > INT32_MAX ? INT32_MAX : (int)ms);
	if (p == 0)
		return TICK_STALLED;
	if (p < 0)
		return errno == EINTR ? 0 : TICK_ERROR;
	r = read(td->fd, data, sizeof(*data));
	if (r == (ssize_t)sizeof(*data))
		return *data ? 1 : 0;
	if (r < 0 && errno == EINTR)
		return 0;
	if (r < 0 && errno == ENODEV)
		return TICK_GONE;
	return TICK_ERROR;
}

void tick_close(struct tick_device *td)
{
	if (td->ops && td->ops->fini)
		td->ops->fini(td);
	td->ops = NULL;
}
