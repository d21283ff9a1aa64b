/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <string.h>

#include "clockd/sources/clocksource.h"
#include "shared/log.h"

/* Every driver; "auto" means tsc, then posix (devices.c). */
const struct clocksource_ops *const clocksource_drivers[] = {
	&clocksource_tsc,
	&clocksource_hpet,
	&clocksource_phc,
	&clocksource_posix,
	&clocksource_sim,
	NULL,
};

const struct clocksource_ops *clocksource_find(const char *name)
{
	for (size_t i = 0; clocksource_drivers[i]; i++)
		if (strcmp(clocksource_drivers[i]->name, name) == 0)
			return clocksource_drivers[i];
	return NULL;
}

int clocksource_open(struct clocksource *cs, const struct clocksource_ops *ops,
		     const struct source_params *p)
{
	memset(cs, 0, sizeof(*cs));
	cs->ops = ops;
	if (ops->init(cs, p) < 0) {
		cs->ops = NULL;
		return -1;
	}
	log_info("clocksource %s%s%s: %llu Hz, mask %#llx", ops->name, cs->device[0] ? " " : "",
		 cs->device, (unsigned long long)cs->freq_hz, (unsigned long long)cs->mask);
	return 0;
}

void clocksource_close(struct clocksource *cs)
{
	if (cs->ops && cs->ops->fini)
		cs->ops->fini(cs);
	cs->ops = NULL;
}
