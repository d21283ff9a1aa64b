/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Clocksources: free-running counters, the kernel's struct clocksource. One
 * driver per file, listed in clocksource.c; adding a device is one file and
 * one table entry.
 */
#ifndef CLOCKD_CLOCKSOURCE_H
#define CLOCKD_CLOCKSOURCE_H

#include <stdbool.h>
#include <stdint.h>

#include "clockd/sim.h"

struct clocksource;

/* What the clocksource drivers take from the configuration (main.c fills
 * it; each driver reads its own fields). */
struct source_params {
	const char *hpet_device;   /* hpet */
	const char *phc_device;    /* phc */
	const char *posix_clock;   /* posix: a kernel clock's name */
	uint32_t tsc_calibrate_ms; /* tsc */
	struct sim_params sim;     /* sim */
};

struct clocksource_ops {
	const char *name;
	const char *descr;
	/* Open the device and find its rate. 0 on success; -1 after logging
	 * why (the caller may try the next source). */
	int (*init)(struct clocksource *cs, const struct source_params *p);
	/* The counter now. Called from the tick path only. A driver that
	 * finds its device gone (an error a retry will not cure) sets
	 * cs->gone and returns its last value; the timekeeper then moves to
	 * the next configured source. Stalls, backward and forward jumps are
	 * detected by the timekeeper, against the kernel's clock. */
	uint64_t (*read)(struct clocksource *cs);
	/* Optional, for a counter clients may read (vclock_mode not NONE):
	 * the counter read from any thread of the daemon, as a client reads
	 * it, touching no driver state (the timekeeper's in-process clock,
	 * tk_clock_ns). False when it cannot be read now. Valid from init
	 * until fini, which comes after every reader stopped. */
	bool (*read_shared)(const struct clocksource *cs, uint64_t *c);
	/* Optional: a better estimate of the rate, when one is due. Returns
	 * true and sets *freq_hz when the estimate changed. */
	bool (*refine)(struct clocksource *cs, uint64_t now, uint64_t *freq_hz);
	void (*fini)(struct clocksource *cs);
};

struct clocksource {
	const struct clocksource_ops *ops;
	uint64_t freq_hz;       /* counter rate, cycles per second */
	uint64_t mask;          /* counter width */
	uint32_t vclock_mode;   /* CLOCKD_VCLOCK_*: can clients read it? */
	int32_t vclock_clockid; /* for CLOCKD_VCLOCK_POSIX */
	char vclock_path[64];   /* for CLOCKD_VCLOCK_HPET, _PHC: what clients open */
	char device[48];        /* device path or detail, for clockctl sources */
	bool gone;              /* set by read(): the device disappeared */
	void *priv;             /* the driver's state */
};

extern const struct clocksource_ops clocksource_tsc;
extern const struct clocksource_ops clocksource_posix;
extern const struct clocksource_ops clocksource_hpet;
extern const struct clocksource_ops clocksource_phc;
extern const struct clocksource_ops clocksource_sim;

/* NULL-terminated table of every driver. */
extern const struct clocksource_ops *const clocksource_drivers[];
const struct clocksource_ops *clocksource_find(const char *name);

/* Open one driver into @cs. 0, or -1 after logging why (naming the
 * driver and the device). */
int clocksource_open(struct clocksource *cs, const struct clocksource_ops *ops,
		     const struct source_params *p);
void clocksource_close(struct clocksource *cs);

#endif
