/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * PPS references: a tick device at 1 Hz whose every pulse is an event at
 * its time stamp (gpio: a PPS on a GPIO line; sim: the simulated device).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <clockd/page.h>
#include "clockd/references/reference.h"
#include "shared/log.h"
#include "shared/tickmath.h"

/* A PPS that has not pulsed for this many seconds is stalled. */
#define REF_STALL_PERIODS 3

static int pps_open(struct reference *r, const char *tick, const struct tick_params *tp)
{
	const struct tick_ops *ops = tick_find(tick);
	struct tick_device *td;

	if (!ops) {
		log_warnx("reference %s: not built into this clockd", tick);
		return -1;
	}
	td = calloc(1, sizeof(*td));
	if (!td) {
		log_warn("reference %s", tick);
		return -1;
	}
	if (tick_open(td, ops, tp) < 0) {
		free(td);
		return -1;
	}
	memcpy(r->device, td->device, sizeof(r->device));
	r->priv = td;
	return 0;
}

static int gpio_open(struct reference *r, const struct ref_params *p)
{
	struct tick_params tp = { .hz = 1, .stall_ticks = REF_STALL_PERIODS, .gpio = p->pps };

	tp.gpio.debounce_us = 0;
	return pps_open(r, "gpio", &tp);
}

static int sim_open(struct reference *r, const struct ref_params *p)
{
	struct tick_params tp = { .hz = 1, .stall_ticks = REF_STALL_PERIODS, .sim = p->sim };

	return pps_open(r, "sim", &tp);
}

static void pps_loop(struct reference *r)
{
	struct tick_device *td = r->priv;

	while (!refqueue_stopping(r)) {
		int64_t n = td->ops->wait(td, 0);
		struct ref_event ev = { 0 };

		if (n > 0) {
			ev.stamp_ns = td->stamp_ns ? td->stamp_ns : kclock_ns(CLOCK_MONOTONIC);
			refqueue_set_fault(r, CLOCKD_FAULT_NONE);
			refqueue_push(r, &ev);
		} else if (n == TICK_STALLED) {
			refqueue_set_fault(r, CLOCKD_FAULT_STALLED);
		} else if (n == TICK_GONE) {
			refqueue_set_fault(r, CLOCKD_FAULT_GONE);
			return;
		} else if (n < 0) {
			struct timespec nap = { 0, 100000000 };

			refqueue_set_fault(r, CLOCKD_FAULT_ERROR);
			clock_nanosleep(CLOCK_MONOTONIC, 0, &nap, NULL);
		}
	}
}

static void pps_close(struct reference *r)
{
	tick_close(r->priv);
	free(r->priv);
	r->priv = NULL;
}

const struct ref_driver ref_gpio = {
	.name = "gpio", .pps = true, .open = gpio_open, .loop = pps_loop, .close = pps_close,
};

const struct ref_driver ref_sim = {
	.name = "sim", .pps = true, .open = sim_open, .loop = pps_loop, .close = pps_close,
};
