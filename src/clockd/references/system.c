/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The kernel's own clock as the reference (reference = system, the
 * default): CLOCKD_REALTIME keeps CLOCK_REALTIME's rate and phase, slews
 * of whoever disciplines it (chronyd, timesyncd) included, and
 * CLOCKD_MONOTONIC, which runs at the same rate, keeps CLOCK_MONOTONIC's
 * rate; phc2sys -s CLOCK_REALTIME the other way round.
 *
 * A sample is the counter read between two reads of CLOCK_REALTIME, the
 * narrowest bracket of a few tries (as phc2sys and chrony sample a PHC):
 * the kernel's time at the counter read is the bracket's middle, within
 * its half-width. The kernel's clock has no jitter of its own beyond that
 * (tens of ns), so it is sampled often (every SYSTEM_POLL_NS, at most once
 * a tick) and the fit is short (SYSTEM_HISTORY samples): a change of the
 * kernel's rate (a slew starting or ending) is followed within tens of ms.
 * Steps of the kernel's time are followed by the timekeeper at once
 * (tk_follow_wall); a sample taken across one is dropped by the
 * discipline (the wall offset it carries is not the one followed).
 */
#include <stdio.h>
#include <time.h>

#include "clockd/references/reference.h"
#include "shared/tickmath.h"

/* Every 2 ms: the fit over SYSTEM_HISTORY samples spans 14 ms (at a
 * lower HZ, one sample a tick; the discipline keeps the span). */
#define SYSTEM_POLL_NS 2000000ll
#define SYSTEM_HISTORY 8
/* Of the offset slewed out per second: 20, a twenty-fifth a sample at
 * 2 ms (the discipline caps it at a quarter a sample). */
#define SYSTEM_SLEW_GAIN 20.0
#define SAMPLE_TRIES 5
/* A bracket wider than this (the thread preempted between the reads) is
 * no sample. */
#define SAMPLE_MAX_NS 20000

static int system_open(struct reference *r, const struct ref_params *p)
{
	(void)p;
	snprintf(r->device, sizeof(r->device), "CLOCK_REALTIME");
	return 0;
}

static bool system_sample(struct reference *r, struct clocksource *cs, struct ref_event *ev)
{
	int64_t best = -1, mid = 0, m = 0, w0, w1;
	uint64_t best_c = 0;

	(void)r;
	for (int i = 0; i < SAMPLE_TRIES; i++) {
		int64_t r0 = kclock_ns(CLOCK_REALTIME);
		uint64_t c = cs->ops->read(cs);
		int64_t r1 = kclock_ns(CLOCK_REALTIME);

		m = kclock_ns(CLOCK_MONOTONIC);
		/* r1 < r0: stepped back in between. */
		if (r1 < r0 || r1 - r0 > SAMPLE_MAX_NS || (best >= 0 && r1 - r0 >= best))
			continue;
		best = r1 - r0;
		best_c = c;
		mid = r0 + best / 2;
		w1 = r1 - m;
		/* The kernel's CLOCK_MONOTONIC at the counter read. */
		ev->stamp_ns = m - (r1 - mid);
		ev->wall_ns = w1;
	}
	if (best < 0)
		return false;
	/* The wall offset again: a step right after the sample shows. */
	w0 = ev->wall_ns;
	w1 = kclock_ns(CLOCK_REALTIME) - kclock_ns(CLOCK_MONOTONIC);
	if (w1 - w0 > SAMPLE_MAX_NS || w0 - w1 > SAMPLE_MAX_NS)
		return false;
	ev->ref_real_ns = mid;
	ev->counter = true;
	ev->cycles = best_c;
	ev->half_ns = (uint32_t)((best + 1) / 2);
	return true;
}

static void system_close(struct reference *r)
{
	(void)r;
}

const struct ref_driver ref_system = {
	.name = "system",
	.pps = false,
	.kernel = true,
	.history = SYSTEM_HISTORY,
	.slew_gain = SYSTEM_SLEW_GAIN,
	.open = system_open,
	.sample = system_sample,
	.poll_ns = SYSTEM_POLL_NS,
	.close = system_close,
};
