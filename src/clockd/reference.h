/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The reference the clock is disciplined to (clockd.conf: reference): a
 * 1 PPS signal (a GPIO line, or the simulated device) whose edges mark the
 * seconds, or a PTP hardware clock compared by cross-timestamps once a
 * second. A thread of its own waits for the device and queues events; the
 * tick thread takes them after its next update (within a tick) and feeds
 * the discipline.
 */
#ifndef CLOCKD_REFERENCE_H
#define CLOCKD_REFERENCE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "clockd/clocksource.h"
#include "clockd/tick.h"
#include "shared/config.h"

struct ref_event {
	int64_t stamp_ns;    /* kernel CLOCK_MONOTONIC of the event */
	int64_t ref_real_ns; /* the reference's realtime then; 0 for a PPS
			      * edge, which marks a whole second */
};

#define REF_QUEUE 16

struct reference {
	const char *name;        /* NULL: no reference */
	char device[48];
	struct clockd_config cfg; /* the device's view of the configuration */
	struct tick_device td;   /* sim, gpio: pulses at 1 Hz */
	struct clocksource cs;   /* phc */
	int64_t tai_offset_ns;   /* phc: TAI - UTC when opened */
	pthread_t thread;
	bool running;
	bool stop;               /* atomic */
	uint32_t fault;          /* atomic: CLOCKD_FAULT_* now, 0 when fine */
	pthread_mutex_t lock;    /* the queue */
	struct ref_event q[REF_QUEUE];
	unsigned head, tail;
	uint64_t dropped;        /* queue full */
};

/* Open the configured reference (none: r->name NULL). 0, or -1 after
 * logging why. */
int reference_open(struct reference *r, const struct clockd_config *cfg);
int reference_start(struct reference *r);
/* The next queued event, if any (tick thread). */
bool reference_pop(struct reference *r, struct ref_event *ev);
/* The reference's fault now (CLOCKD_FAULT_STALLED, _GONE), or 0. */
uint32_t reference_fault(struct reference *r);
void reference_stop(struct reference *r);
void reference_close(struct reference *r);

#endif
