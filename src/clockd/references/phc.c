/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A PTP hardware clock as the reference: a cross-timestamp a second (phc.h),
 * its TAI time taken back to UTC by the kernel's TAI offset. A clock that
 * does not move with the kernel's (frozen, as qemu's e1000e clock is) is
 * stalled.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <clockd/page.h>
#include "clockd/sources/clocksource.h"
#include "clockd/sources/phc.h"
#include "clockd/references/reference.h"
#include "shared/log.h"
#include "shared/tickmath.h"

struct ref_phc_state {
	struct clocksource cs;
	int64_t tai_offset_ns; /* TAI - UTC when opened */
};

static int phc_open(struct reference *r, const struct ref_params *p)
{
	struct source_params sp = { .phc_device = p->phc_device };
	struct ref_phc_state *st = calloc(1, sizeof(*st));
	struct timespec tai, real;

	if (!st) {
		log_warn("reference phc");
		return -1;
	}
	if (clocksource_open(&st->cs, &clocksource_phc, &sp) < 0) {
		free(st);
		return -1;
	}
	clock_gettime(CLOCK_TAI, &tai);
	clock_gettime(CLOCK_REALTIME, &real);
	/* Whole seconds: the kernel's TAI offset (0 if never set). */
	st->tai_offset_ns = (ts_to_ns(&tai) - ts_to_ns(&real) + (int64_t)NSEC_PER_SEC / 2) /
			    (int64_t)NSEC_PER_SEC * (int64_t)NSEC_PER_SEC;
	memcpy(r->device, st->cs.device, sizeof(r->device));
	r->priv = st;
	return 0;
}

static void phc_loop(struct reference *r)
{
	struct ref_phc_state *st = r->priv;
	int64_t last_phc = 0, last_sys = 0;

	while (!refqueue_stopping(r)) {
		struct timespec sec = { 1, 0 };
		int64_t phc, sys, wall;
		struct ref_event ev = { 0 };

		if (clock_nanosleep(CLOCK_MONOTONIC, 0, &sec, NULL) == EINTR)
			continue;
		if (phc_cross_timestamp(&st->cs, &phc, &sys) < 0) {
			refqueue_set_fault(r, errno == ENODEV ? CLOCKD_FAULT_GONE : CLOCKD_FAULT_ERROR);
			continue;
		}
		/* A reading is used only once the next shows the PHC runs:
		 * a frozen clock must not step the realtime. */
		if (!last_sys || (phc - last_phc) < (sys - last_sys) / 2) {
			if (last_sys)
				refqueue_set_fault(r, CLOCKD_FAULT_STALLED);
			last_phc = phc;
			last_sys = sys;
			continue;
		}
		last_phc = phc;
		last_sys = sys;
		wall = kclock_ns(CLOCK_REALTIME) - kclock_ns(CLOCK_MONOTONIC);
		ev.stamp_ns = sys - wall;
		ev.ref_real_ns = phc - st->tai_offset_ns;
		refqueue_set_fault(r, CLOCKD_FAULT_NONE);
		refqueue_push(r, &ev);
	}
}

static void phc_close(struct reference *r)
{
	struct ref_phc_state *st = r->priv;

	clocksource_close(&st->cs);
	free(st);
	r->priv = NULL;
}

const struct ref_driver ref_phc = {
	.name = "phc", .pps = false, .open = phc_open, .loop = phc_loop, .close = phc_close,
};
