/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The tick thread: the page's only writer. It owns the page's writer lock
 * for its whole life (readers see the daemon alive exactly while this
 * thread lives), blocks in the tick device once per tick and runs the
 * timekeeper. The main thread only starts and stops it.
 */
#ifndef CLOCKD_TICKTHREAD_H
#define CLOCKD_TICKTHREAD_H

#include <pthread.h>
#include <semaphore.h>
#include <stdbool.h>
#include <stdint.h>

#include "clockd/devices.h"
#include "clockd/discipline.h"
#include "clockd/references/reference.h"
#include "clockd/export.h"
#include "clockd/pagefile.h"
#include "clockd/ticks/tick.h"
#include "clockd/timekeeper.h"
#include "clockd/timers/timerbase.h"

/* What the tick thread takes from the configuration. */
struct tickthread_params {
	uint32_t priority;    /* tick_priority: 0 SCHED_OTHER, else SCHED_FIFO */
	uint32_t stall_ticks; /* consecutive device errors: the device faulted */
};

struct tickthread {
	struct tickthread_params p;
	struct devices *dv;
	struct timekeeper *tk;
	struct pagefile *pf;
	struct exporter *ex; /* NTP export, or NULL */
	int64_t last_export_ns; /* kernel CLOCK_MONOTONIC of the last sample */
	pthread_t thread;
	sem_t ready;
	int start_error;   /* set before ready is posted */
	uint64_t errors;   /* consecutive device errors */
	int64_t last_stamp_ns; /* device time stamp of the last accepted tick */
	uint64_t spurious, missed; /* pulses, over the daemon's life */
	struct reference *ref;     /* ref->name NULL: no reference */
	struct discipline *disc;
	bool stop;         /* set by tickthread_stop (atomic) */
	/* The timer bases, told of every page update and realtime step;
	 * set by the main thread (tickthread_set_bases) while the thread runs,
	 * hence the lock (uncontended but at a change). */
	pthread_mutex_t tb_lock;
	struct timer_bases *tb;
	int64_t real_offset_ns; /* CLOCKD_REALTIME - CLOCKD_MONOTONIC published */
};

/* What the tick thread works on, set up by the caller. */
struct tickthread_parts {
	struct devices *dv;
	struct timekeeper *tk;
	struct pagefile *pf;
	struct reference *ref;   /* ref->name NULL: no reference */
	struct discipline *disc;
	struct exporter *ex;     /* NTP export, or NULL */
};

/* Start the thread (@t is reset first); returns once it owns the page and
 * has published, or failed (-1, logged). From here on the tick thread
 * owns every part of @parts but the page (which it writes through
 * pagefile.h). */
int tickthread_start(struct tickthread *t, const struct tickthread_params *p, const struct tickthread_parts *parts);

/* Main thread: from now on tell @tb (NULL: nobody) of each page update
 * (timer_bases_tick) and realtime step (timer_bases_clock_was_set).
 * Returns once the tick thread no longer uses the previous one. */
void tickthread_set_bases(struct tickthread *t, struct timer_bases *tb);

/* Stop it: the page is marked STOPPING and released (readers see the
 * daemon gone). */
void tickthread_stop(struct tickthread *t);

#endif
