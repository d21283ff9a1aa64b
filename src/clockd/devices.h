/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The device chains: the clocksources and tick devices the configuration
 * lists (source = hpet, posix; tick = gpio, timerfd), in order of
 * preference. One of each is in use; when it faults (it stalls, goes
 * backwards, jumps, disappears) the next one that opens takes over, as the
 * kernel's clocksource watchdog moves off an unstable TSC. A faulted device
 * is not taken back until the daemon restarts: a device that misbehaved once
 * is not trusted with the clock again, while another keeps it. With none
 * left, the last one is taken back once it works again (a tick device
 * that ticks; a source that behaved for source_recover_s), since a clock
 * on probation beats no clock.
 *
 * Every device and its state is in the page's device table (clockctl
 * sources). State changes are logged once each; the page's FAULT flag is
 * set from the first fault on.
 */
#ifndef CLOCKD_DEVICES_H
#define CLOCKD_DEVICES_H

#include <clockd/page.h>
#include "clockd/sources/clocksource.h"
#include "clockd/pagefile.h"
#include "clockd/ticks/tick.h"
#include "shared/config.h"

/* What the device chains take from the configuration (main.c fills it). */
struct devices_params {
	const char *sources; /* source: names in order of preference ("auto": tsc, posix) */
	const char *ticks;   /* tick: the same */
	struct source_params source;
	struct tick_params tick;
};

struct devices {
	struct devices_params p;
	struct pagefile *pf;    /* NULL until devices_attach */
	struct clockd_page_device tab[CLOCKD_PAGE_MAX_DEVICES]; /* sources, then ticks */
	unsigned nsrc, ntick;
	int ref;                /* the reference's entry, -1: none */
	const struct clocksource_ops *src_ops[CONFIG_LIST_MAX];
	const struct tick_ops *tick_ops[CONFIG_LIST_MAX];
	struct clocksource cs[CONFIG_LIST_MAX];
	struct tick_device td[CONFIG_LIST_MAX];
	unsigned src_cur, tick_cur; /* index of the one in use */
	bool faulted;               /* any fault so far: the page's FAULT flag */
};

/* Open the first clocksource and the first tick device that work; the rest
 * wait on standby. 0, or -1 after logging why (each device's reason). */
int devices_open(struct devices *dv, const struct devices_params *p);
/* Publish the table on the page (from then on kept there). */
void devices_attach(struct devices *dv, struct pagefile *pf);
void devices_close(struct devices *dv);

struct clocksource *devices_source(struct devices *dv);
struct tick_device *devices_tick(struct devices *dv);

/*
 * The source (tick device) in use has @fault (CLOCKD_FAULT_*), described by
 * @why: mark it, log it, and open the next configured one. Returns the new
 * device, or NULL when none is left (the faulted one stays in use, marked).
 * Tick thread only, once the daemon runs.
 */
struct clocksource *devices_source_fault(struct devices *dv, uint32_t fault, const char *why);
struct tick_device *devices_tick_fault(struct devices *dv, uint32_t fault, const char *why);
/* A faulted device with no fallback works again (the source: it behaved
 * for @good_ns on probation). */
void devices_tick_recovered(struct devices *dv);
void devices_source_recovered(struct devices *dv, int64_t good_ns);
/* Pulses of the tick device in use rejected as spurious / seen missing. */
void devices_tick_pulses(struct devices *dv, uint64_t spurious, uint64_t missed);

/* The reference, listed after the tick devices (active when opened). */
void devices_add_reference(struct devices *dv, const char *name, const char *device);
/* Its fault now (CLOCKD_FAULT_NONE: fine): logged and shown on change.
 * Tick thread. */
void devices_reference_fault(struct devices *dv, uint32_t fault);


#endif
