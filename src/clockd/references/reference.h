/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The reference the clock is disciplined to (clockd.conf: reference): a
 * 1 PPS signal (a GPIO line, or the simulated device) whose edges mark the
 * seconds, a PTP hardware clock compared by cross-timestamps once a
 * second, or the kernel's own CLOCK_REALTIME (system, the default). A
 * hardware reference has a thread of its own that waits for the device and
 * queues events; the tick thread takes them after its next update (within
 * a tick) and feeds the discipline. The system reference has no thread: the
 * tick thread samples it after an update, every poll_ns (reference_poll),
 * the counter read between two reads of the kernel's clock.
 *
 * Drivers: one file each behind struct ref_driver, listed in
 * reference_drivers[] (reference.c): pps.c (gpio, sim), phc.c, kpps.c
 * (pps: a kernel PPS device, RFC 2783), system.c.
 * A threaded driver talks to the rest through the queue (queue.c) alone.
 */
#ifndef CLOCKD_REFERENCE_H
#define CLOCKD_REFERENCE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "clockd/sources/clocksource.h"
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
	/* A polled sample (system): the counter at the event, read between
	 * two reads of the reference within +-half_ns, and the kernel's wall
	 * offset (CLOCK_REALTIME - CLOCK_MONOTONIC) then. */
	bool counter;        /* cycles is set: the event is at that counter value */
	uint64_t cycles;
	uint32_t half_ns;
	int64_t wall_ns;
};

struct reference;

struct ref_driver {
	const char *name;
	bool pps; /* its events mark whole seconds (ref_real_ns 0) */
	bool kernel; /* the kernel's own clock: its steps are the reference's */
	/* The discipline's tuning for it; 0: the defaults (discipline.c). */
	unsigned history;   /* the most offsets its fit uses */
	double slew_gain;   /* of the offset slewed out per second */
	/* Open the device (r->priv, r->device). 0, or -1 after logging why. */
	int (*open)(struct reference *r, const struct ref_params *p);
	/* The reference thread: queue events (refqueue_push) and faults
	 * (refqueue_set_fault) until refqueue_stopping(r); a blocking call
	 * returns EINTR when the thread is told to stop (wakeup.h). NULL: no
	 * thread, the driver is polled (sample). */
	void (*loop)(struct reference *r);
	/* A polled driver: an event at the counter of @cs (tick thread, after
	 * an update), every poll_ns; false if no good sample could be had. */
	bool (*sample)(struct reference *r, struct clocksource *cs, struct ref_event *ev);
	int64_t poll_ns;
	void (*close)(struct reference *r);
};

extern const struct ref_driver ref_gpio;
extern const struct ref_driver ref_sim;
extern const struct ref_driver ref_phc;
extern const struct ref_driver ref_system;
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
	int64_t last_poll_ns;    /* a polled driver: kernel CLOCK_MONOTONIC of its last sample */
};

/* Open the configured reference (none: r->name NULL). 0, or -1 after
 * logging why. */
int reference_open(struct reference *r, const struct ref_params *p);
int reference_start(struct reference *r);
void reference_stop(struct reference *r);
void reference_close(struct reference *r);

/* queue.c: the queue between the reference thread and the tick thread. */
/* The next queued event, if any (tick thread). */
bool reference_pop(struct reference *r, struct ref_event *ev);
/* A polled driver's event, if one is due at kernel CLOCK_MONOTONIC
 * @now_ns and could be had (tick thread, after an update of @cs). */
bool reference_poll(struct reference *r, struct clocksource *cs, int64_t now_ns, struct ref_event *ev);
/* The reference's fault now (CLOCKD_FAULT_STALLED, _GONE), or 0. */
uint32_t reference_fault(struct reference *r);
/* The driver's side, in the reference thread. */
void refqueue_push(struct reference *r, const struct ref_event *ev);
void refqueue_set_fault(struct reference *r, uint32_t fault);
bool refqueue_stopping(struct reference *r);

#endif
