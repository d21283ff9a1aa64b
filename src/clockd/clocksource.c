/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <string.h>

#include "clockd/clocksource.h"
#include "shared/log.h"

/* In order of preference for "auto". */
const struct clocksource_ops *const clocksource_drivers[] = {
	&clocksource_tsc,
	&clocksource_posix,
	NULL,
};

const struct clocksource_ops *clocksource_find(const char *name)
{
	for (size_t i = 0; clocksource_drivers[i]; i++)
		if (strcmp(clocksource_drivers[i]->name, name) == 0)
			return clocksource_drivers[i];
	return NULL;
}

static int try_open(struct clocksource *cs, const struct clocksource_ops *ops,
		    const struct clockd_config *cfg)
{
	memset(cs, 0, sizeof(*cs));
	cs->ops = ops;
	if (ops->init(cs, cfg) < 0)
		return -1;
	log_info("clocksource %s: %llu Hz, mask %#llx", ops->name,
		 (unsigned long long)cs->freq_hz, (unsigned long long)cs->mask);
	return 0;
}

int clocksource_open(struct clocksource *cs, const struct clockd_config *cfg)
{
	const struct clocksource_ops *ops;

	if (strcmp(cfg->source, "auto") != 0) {
		ops = clocksource_find(cfg->source);
		if (!ops) {
			log_warnx("source %s: no such clocksource driver", cfg->source);
			return -1;
		}
		return try_open(cs, ops, cfg);
	}
	for (size_t i = 0; clocksource_drivers[i]; i++)
		if (try_open(cs, clocksource_drivers[i], cfg) == 0)
			return 0;
	log_warnx("source auto: no clocksource could be opened");
	return -1;
}

void clocksource_close(struct clocksource *cs)
{
	if (cs->ops && cs->ops->fini)
		cs->ops->fini(cs);
	cs->ops = NULL;
}
