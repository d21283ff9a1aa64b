/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <string.h>

#include "clockd/tick.h"
#include "shared/log.h"

const struct tick_ops *const tick_drivers[] = {
	&tick_timerfd,
	NULL,
};

const struct tick_ops *tick_find(const char *name)
{
	for (size_t i = 0; tick_drivers[i]; i++)
		if (strcmp(tick_drivers[i]->name, name) == 0)
			return tick_drivers[i];
	return NULL;
}

int tick_open(struct tick_device *td, const struct clockd_config *cfg)
{
	const struct tick_ops *ops = tick_find(cfg->tick);

	memset(td, 0, sizeof(*td));
	td->fd = -1;
	if (!ops) {
		log_warnx("tick %s: no such tick driver", cfg->tick);
		return -1;
	}
	td->ops = ops;
	td->hz = cfg->hz;
	return ops->init(td, cfg);
}

void tick_close(struct tick_device *td)
{
	if (td->ops && td->ops->fini)
		td->ops->fini(td);
	td->ops = NULL;
}
