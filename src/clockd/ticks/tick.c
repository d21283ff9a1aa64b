/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <string.h>

#include "clockd/ticks/tick.h"
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

int tick_open(struct tick_device *td, const struct tick_ops *ops, const struct tick_params *p)
{
	memset(td, 0, sizeof(*td));
	td->fd = -1;
	td->ops = ops;
	td->hz = p->hz;
	td->stall_ns = (int64_t)p->stall_ticks * (int64_t)tick_period_ns_ceil(p->hz);
	if (ops->init(td, p) < 0) {
		td->ops = NULL;
		return -1;
	}
	log_info("tick %s%s%s: %u Hz%s", ops->name, td->device[0] ? " " : "", td->device, td->hz,
		 td->self_paced ? ", jiffies count its ticks" : "");
	return 0;
}

void tick_close(struct tick_device *td)
{
	if (td->ops && td->ops->fini)
		td->ops->fini(td);
	td->ops = NULL;
}
