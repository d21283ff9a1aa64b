/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The fault script of the simulated device (config key sim_script): a list
 * of events "AT ACTION [ARG]" separated by ';', in time order, AT being a
 * time since the daemon started the device:
 *
 *     2s stall 500ms      the device stops for 500 ms (no pulses, counter
 *                         frozen); "stall" alone: for ever
 *     3s step +1ms        the device's time jumps by +1 ms (or back, -1ms):
 *                         the counter, and the pulses come 1 ms earlier
 *     4s spurious 3       3 extra pulses just after the next one
 *     5s miss 2           the next 2 pulses do not come
 *     6s rate -20         the rate error becomes -20 ppm
 *     7s vanish           the device disappears (reads and waits fail)
 *     8s late 70ms        the next pulse comes 70 ms late (a wake-up or
 *                         interrupt held up: an outlier), the later ones
 *                         on time
 *
 * Durations are an integer with a unit: ns, us, ms or s.
 *
 * The sim tick device logs its truth for tests ("tick sim: truth from
 * kernel CLOCK_MONOTONIC FROM ns: pulse K at AT ns, period P ns") at its
 * start and at each rate change or step; clockd.conf(5) says how to read
 * it.
 */
#ifndef CLOCKD_SHARED_SIMSCRIPT_H
#define CLOCKD_SHARED_SIMSCRIPT_H

#include <stddef.h>
#include <stdint.h>

enum sim_action {
	SIM_STALL,    /* arg: duration ns, INT64_MAX for ever */
	SIM_STEP,     /* arg: signed ns */
	SIM_SPURIOUS, /* arg: count */
	SIM_MISS,     /* arg: count */
	SIM_RATE,     /* arg: ppm */
	SIM_VANISH,
	SIM_LATE,     /* arg: duration ns */
};

struct sim_event {
	int64_t at_ns;
	enum sim_action action;
	int64_t arg;
};

#define SIM_MAX_EVENTS 32

/* Parse @text into @ev (at most SIM_MAX_EVENTS). Returns the number of
 * events, or -1 with @why naming the event at fault. */
int simscript_parse(const char *text, struct sim_event *ev, char *why, size_t whylen);
/* The config table's check of sim_script. */
int simscript_validate(const char *text, char *why, size_t whylen);

#endif
