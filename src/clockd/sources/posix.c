/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * posix: a kernel clock as the counter, in ns. The portable fallback; a
 * client reads the same kernel clock itself (CLOCKD_VCLOCK_POSIX), so it
 * still gets nanosecond time with no round trip to the daemon.
 *
 * A time namespace shifts the monotonic and boot clocks by its offsets: a
 * client in another namespace than the daemon's would read another
 * counter. So the counter is the clock in the initial namespace's terms:
 * the daemon takes its own offset off, and so does each client
 * (libclockd, clock.c).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <clockd/page.h>
#include "clockd/sources/clocksource.h"
#include "shared/log.h"
#include "shared/tickmath.h"
#include "shared/timens.h"

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

/* The daemon's own offset on its clock (read at init; the namespace of a
 * process does not change once it has threads). */
static int64_t posix_offset;

static int posix_init(struct clocksource *cs, const struct source_params *p)
{
	struct timens_offsets o;
	struct timespec ts;
	int err;

	for (size_t i = 0; i < sizeof(posix_clocks) / sizeof(posix_clocks[0]); i++) {
		if (strcmp(p->posix_clock, posix_clocks[i].name) != 0)
			continue;
		if (clock_gettime(posix_clocks[i].id, &ts) < 0) {
			log_warn("posix_clock %s", p->posix_clock);
			return -1;
		}
		err = timens_read(&o);
		if (err < 0 && err != -ENOENT)
			log_warnx("posix_clock %s: /proc/self/timens_offsets: %s: clients in other time namespaces may read another clock",
				  p->posix_clock, strerror(-err));
		posix_offset = timens_offset_of(&o, posix_clocks[i].id);
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
	return (uint64_t)ts_to_ns(&ts) - (uint64_t)posix_offset;
}

static bool posix_read_shared(const struct clocksource *cs, uint64_t *c)
{
	struct timespec ts;

	if (clock_gettime(cs->vclock_clockid, &ts) != 0)
		return false;
	*c = (uint64_t)ts_to_ns(&ts) - (uint64_t)posix_offset;
	return true;
}

const struct clocksource_ops clocksource_posix = {
	.name = "posix",
	.descr = "a kernel clock (posix_clock), read by clients through the vDSO",
	.init = posix_init,
	.read = posix_read,
	.read_shared = posix_read_shared,
};
