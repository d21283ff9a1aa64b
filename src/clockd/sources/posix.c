/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * posix: a kernel clock as the counter, in ns. The portable fallback; a
 * client reads the same kernel clock itself (CLOCKD_VCLOCK_POSIX), so it
 * still gets nanosecond time with no round trip to the daemon.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <clockd/page.h>
#include "clockd/sources/clocksource.h"
#include "shared/log.h"
#include "shared/tickmath.h"

static const struct {
	const char *name;
	clockid_t id;
} posix_clocks[] = {
	{ "monotonic_raw", CLOCK_MONOTONIC_RAW },
	{ "monotonic", CLOCK_MONOTONIC },
	{ "boottime", CLOCK_BOOTTIME },
	{ "realtime", CLOCK_REALTIME },
	{ "tai", CLOCK_TAI },
};

static int posix_init(struct clocksource *cs, const struct source_params *p)
{
	struct timespec ts;

	for (size_t i = 0; i < sizeof(posix_clocks) / sizeof(posix_clocks[0]); i++) {
		if (strcmp(p->posix_clock, posix_clocks[i].name) != 0)
			continue;
		if (clock_gettime(posix_clocks[i].id, &ts) < 0) {
			log_warn("posix_clock %s", p->posix_clock);
			return -1;
		}
		cs->freq_hz = NSEC_PER_SEC;
		cs->mask = UINT64_MAX;
		cs->vclock_mode = CLOCKD_VCLOCK_POSIX;
		cs->vclock_clockid = posix_clocks[i].id;
		snprintf(cs->device, sizeof(cs->device), "kernel clock %s", posix_clocks[i].name);
		return 0;
	}
	log_warnx("posix_clock %s: unknown kernel clock", p->posix_clock);
	return -1;
}

static uint64_t posix_read(struct clocksource *cs)
{
	struct timespec ts;

	clock_gettime(cs->vclock_clockid, &ts);
	return (uint64_t)ts_to_ns(&ts);
}

static bool posix_read_shared(const struct clocksource *cs, uint64_t *c)
{
	struct timespec ts;

	if (clock_gettime(cs->vclock_clockid, &ts) != 0)
		return false;
	*c = (uint64_t)ts_to_ns(&ts);
	return true;
}

const struct clocksource_ops clocksource_posix = {
	.name = "posix",
	.descr = "a kernel clock (posix_clock), read by clients through the vDSO",
	.init = posix_init,
	.read = posix_read,
	.read_shared = posix_read_shared,
};
