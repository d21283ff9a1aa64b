/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The reference the clock is disciplined to (clockd.conf: reference): a
 * 1 PPS signal (a GPIO line, or the simulated device) whose edges mark the
 * seconds, or a PTP hardware clock compared by cross-timestamps once a
 * second. A thread of its own waits for the device and queues events; the
 * tick thread takes them after its next update (within a tick) and feeds
 * the discipline.
 *
 * Drivers: one file each behind struct ref_driver, listed in
 * reference_drivers[] (reference.c): pps.c (gpio, sim), phc.c, kpps.c
 * (pps: a kernel PPS device, RFC 2783).
 * A driver talks to the rest through the queue (refqueue.c) alone.
 */
#ifndef CLOCKD_REFERENCE_H
#define CLOCKD_REFERENCE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "clockd/ticks/tick.h"

/* What a reference takes from the configuration. */
struct ref_params {
	const char *name;            /* reference: "none", or a driver's name */
	struct gpio_line_params pps; /* gpio: pps_chip, pps_line, pps_edge */
	const char *phc_device;      /* phc */
	const char *pps_device;      /* pps: the kernel PPS device (edge: pps.edge) */
	struct sim_params sim;       /* sim */
};

struct ref_event {
	int64_t stamp_ns;    /* kernel CLOCK_MONOTONIC of the event */
	int64_t ref_real_ns; /* the reference's realtime then; 0 for a PPS
			      * edge, which marks a whole second */
};

struct reference;

struct ref_driver {
	const char *name;
	bool pps; /* its events mark whole seconds (ref_real_ns 0) */
	/* Open the device (r->priv, r->device). 0, or -1 after logging why. */
	int (*open)(struct reference *r, const struct ref_params *p);
	/* The reference thread: queue events (refqueue_push) and faults
	 * (refqueue_set_fault) until refqueue_stopping(r); a blocking call
	 * returns EINTR when the thread is told to stop (wakeup.h). */
	void (*loop)(struct reference *r);
	void (*close)(struct reference *r);
};

extern const struct ref_driver ref_gpio;
extern const struct ref_driver ref_sim;
extern const struct ref_driver ref_phc;
extern const struct ref_driver ref_kpps;
/* NULL-terminated; a name with no entry is "not built into this clockd". */
extern const struct ref_driver *const reference_drivers[];

#define REF_QUEUE 16

struct reference {
	const char *name;        /* NULL: no reference */
	const struct ref_driver *drv;
	char device[48];
	void *priv;              /* the driver's */
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
int reference_open(struct reference *r, const struct ref_params *p);
int reference_start(struct reference *r);
void reference_stop(struct reference *r);
void reference_close(struct reference *r);

/* refqueue.c: the queue between the reference thread and the tick thread. */
/* The next queued event, if any (tick thread). */
bool reference_pop(struct reference *r, struct ref_event *ev);
/* The reference's fault now (CLOCKD_FAULT_STALLED, _GONE), or 0. */
uint32_t reference_fault(struct reference *r);
/* The driver's side, in the reference thread. */
void refqueue_push(struct reference *r, const struct ref_event *ev);
void refqueue_set_fault(struct reference *r, uint32_t fault);
bool refqueue_stopping(struct reference *r);

#endif
