/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The timekeeper (kernel/time/timekeeping.c): turns counter cycles into
 * ns with mult/shift, keeps CLOCKD_MONOTONIC, _REALTIME, _MONOTONIC_RAW,
 * jiffies_64 and xtime, and publishes them on the page at every tick.
 *
 * Epoch continuity: a daemon that finds a previous daemon's page continues
 * its clocks. Monotonic resumes at the old value plus the kernel's
 * CLOCK_MONOTONIC time since the old page's last update (plus a 0.1 %
 * margin that covers any rate difference, so no value a reader saw is ever
 * repeated); jiffies_64 is a function of monotonic time, so it continues
 * too. A different HZ, or a page from another boot, starts a new jiffies
 * epoch at the next tick number.
 *
 * Realtime: CLOCKD_REALTIME runs at clockd's rate from an offset to
 * CLOCKD_MONOTONIC that follows the kernel's own wall offset (its
 * CLOCK_REALTIME - CLOCK_MONOTONIC). That offset moves only when the system
 * time is stepped (settimeofday, chronyd's makestep, a hypervisor's wall
 * clock sync; NTP slewing changes both kernel clocks alike). What a step
 * does depends on the reference (tk->wall_follow, set by the discipline):
 * with none or the system reference it is followed at once (the slews are
 * the system reference's to follow); with a PPS, which only marks the
 * seconds, the whole seconds of a step of half a second or more are
 * followed (someone setting the date) and the rest is not (the PPS keeps
 * the phase); with a PHC, which gives the date as well, none is.
 */
#ifndef CLOCKD_TIMEKEEPER_H
#define CLOCKD_TIMEKEEPER_H

#include <stdbool.h>
#include <stdint.h>

#include "clockd/leap.h"
#include "clockd/sources/clocksource.h"
#include "clockd/pagefile.h"

/* What the timekeeper takes from the configuration. */
struct tk_params {
	uint32_t hz;
	uint64_t jiffies_wrap_after; /* s: the 32-bit jiffies wrap this long after start */
	uint32_t stale_after_ms;     /* status' stale limit (at least 3 ticks) */
	uint32_t extrapolate_max_s;  /* readers' extrapolation bound, at most */
	uint32_t stall_ticks;        /* tick periods the counter may stand still */
	uint32_t source_recover_s;   /* probation of a faulted source; 0: none */
	uint32_t max_rate_ppm;       /* discipline_max_ppm: the largest rate
				      * correction, against the kernel's rate */
};

struct tk_base {
	int64_t sec;
	uint64_t snsec; /* ns << shift, below 1e9 << shift */
};

/* How CLOCKD_REALTIME follows steps of the kernel's realtime. */
enum tk_wall_follow {
	TK_WALL_ALL,     /* every step (no reference; the system reference) */
	TK_WALL_SECONDS, /* the whole seconds of a step of 0.5 s or more (PPS) */
	TK_WALL_NONE,    /* none: the reference gives the date (PHC) */
};

/* What the discipline publishes (page data, clockctl tracking). */
struct tk_tracking {
	uint32_t state;          /* CLOCKD_DISC_* */
	int64_t offset_ns;       /* last offset to the reference */
	int64_t rms_offset_ns;
	int64_t freq_ppb;        /* rate correction applied */
	int64_t skew_ppb;
	uint64_t error_bound_ns;
	int64_t ref_mono_ns;     /* kernel CLOCK_MONOTONIC of the last reference event */
};

struct timekeeper {
	struct pagefile *pf;     /* the page, written through pagefile.h */
	struct clocksource *cs;
	uint32_t hz;
	uint64_t cycle_last;
	uint32_t mult, raw_mult, shift;
	/* A rate change asked for since the last update (tk_set_freq, a
	 * refined counter rate): applied by the next update once it has
	 * accumulated the time since cycle_last at the published rates. */
	uint32_t next_mult, next_raw_mult;
	bool rate_pending;
	uint64_t max_cycles;     /* extrap_ns in cycles (for readers) */
	uint64_t stale_ns;       /* clockd_status() calls the page stale */
	uint64_t extrap_max_ns;  /* configured bound of extrapolation */
	uint64_t extrap_ns;      /* readers extrapolate this long: published */
	struct tk_base mono, real, raw;
	uint64_t jiffies_base;   /* jiffies_64 at tick 0 of this epoch */
	int64_t jiffies_epoch_ns; /* monotonic ns of tick 0 */
	uint64_t jiffies;
	int64_t kernel_mono_ns;  /* kernel CLOCK_MONOTONIC at the last update */
	int64_t kernel_raw_ns;   /* kernel CLOCK_MONOTONIC_RAW, at start only */
	int64_t kernel_wall_ns;  /* kernel REALTIME - MONOTONIC last followed */
	uint64_t wall_steps;     /* kernel realtime steps followed */
	enum tk_wall_follow wall_follow; /* tk_set_wall_follow (the discipline) */
	uint64_t updates;
	bool counted;            /* jiffies count device ticks (else follow time) */
	int64_t stall_limit_ns;  /* stall_ticks periods */
	int64_t still_ns;        /* kernel time the counter has not moved */
	int64_t read_slack_ns;   /* the last update: kernel time around its counter read */
	int64_t fault_ahead_ns;  /* a jumped counter: how far readers may have seen */
	uint32_t fault;          /* CLOCKD_FAULT_* of the source, set by tk_update */
	/* A faulted source with no other to go to, on probation
	 * (tk_probe_source): */
	int64_t recover_ns;      /* source_recover_s; 0: it stays faulted */
	uint64_t probe_cycle;    /* the counter at the last probe */
	int64_t probe_mono_ns;   /* kernel CLOCK_MONOTONIC then; 0: none yet */
	int64_t probe_slack_ns;  /* that read's bracket */
	int64_t probe_still_ns;  /* kernel time the counter has not moved */
	int64_t probe_good_ns;   /* kernel time it has behaved, without a break */
	struct tk_tracking track; /* tk_set_tracking (the discipline) */
	int64_t adj_ppb;         /* the discipline's rate correction applied */
	struct leap leap;        /* the kernel's leap state, published with realtime */
	char fault_why[128];     /* ... and what was seen */
};

/* Set up from @pf (continuing a reused page) and publish the first state.
 * @counted: jiffies count the ticks given to tk_update (a self-paced tick
 * device). Returns 0, or -1 after logging. */
int tk_init(struct timekeeper *tk, struct pagefile *pf, struct clocksource *cs, const struct tk_params *p,
	    const char *tick_name, bool counted);
/*
 * Read the counter, advance every clock by it, and jiffies by @ticks
 * (counted) or by time, and publish. Checks the counter against the
 * kernel's CLOCK_MONOTONIC first: on a stall, a backward or forward jump or
 * a vanished device it publishes nothing, sets tk->fault and returns false
 * (the caller switches sources with tk_switch_source); counted jiffies
 * still count @ticks, published with the next update.
 */
bool tk_update(struct timekeeper *tk, int64_t ticks);
/*
 * Continue every clock on @cs, from where the faulted source left them plus
 * the kernel's time since (and at least as far as a reader of the old
 * source could have seen): no clock goes back. Publishes.
 */
int tk_switch_source(struct timekeeper *tk, struct clocksource *cs);
/*
 * The source faulted and no other took over (readers get ESTALE): read it
 * at each tick as an update would, against the kernel's clock, publishing
 * nothing. True once it has behaved for source_recover_s without a break
 * (never for a device that is gone, or with source_recover_s 0): the
 * caller takes it back with tk_switch_source(tk, tk->cs).
 */
bool tk_probe_source(struct timekeeper *tk);
/* The discipline's controls (tick thread): a rate correction of the
 * clocks but MONOTONIC_RAW, in ppb (published at the next update); a step
 * of CLOCKD_REALTIME alone; CLOCKD_REALTIME at a kernel CLOCK_MONOTONIC
 * time near the last update. */
void tk_set_freq(struct timekeeper *tk, int64_t ppb);
void tk_step_real(struct timekeeper *tk, int64_t ns);
int64_t tk_real_at(const struct timekeeper *tk, int64_t kernel_mono_ns);
/* CLOCKD_REALTIME at counter value @cycles of the current source, read
 * after the last update (tick thread): exact, no kernel clock involved. */
int64_t tk_real_at_cycles(const struct timekeeper *tk, uint64_t cycles);
/* The discipline's state, published with the next update (tick thread),
 * and how realtime follows the kernel's steps (set up before the tick
 * thread starts). */
void tk_set_tracking(struct timekeeper *tk, const struct tk_tracking *tr);
void tk_set_wall_follow(struct timekeeper *tk, enum tk_wall_follow follow);

/* A new tick device: jiffies now count its ticks (@counted) or follow
 * time, continuing from their current value. */
void tk_set_tick(struct timekeeper *tk, const char *tick_name, bool counted);
/* CLOCKD_MONOTONIC at the last update, ns. */
int64_t tk_mono_ns(const struct timekeeper *tk);
/*
 * CLOCKD_REALTIME - CLOCKD_MONOTONIC as published, ns: both clocks advance
 * alike (rate changes included), so this moves only when realtime is
 * stepped: by the discipline (tk_step_real, published at the next update),
 * by a followed step of the kernel's wall clock, or by a source switch.
 */
int64_t tk_real_offset_ns(const struct timekeeper *tk);
/* CLOCKD_REALTIME at the last update and the kernel's CLOCK_REALTIME at
 * the same update (its CLOCK_MONOTONIC then plus the wall offset followed),
 * ns since the epoch: a pair for the NTP export. */
void tk_real_pair(const struct timekeeper *tk, int64_t *clockd_real_ns, int64_t *system_real_ns);
/*
 * The in-process clock, what the timer bases run on (timerbase.h,
 * tb_clock): CLOCKD_MONOTONIC (@realtime false) or CLOCKD_REALTIME in ns
 * since its epoch (before 1970: 0), from the page as published and the
 * counter read as a client reads it (clocksource read_shared; tick
 * resolution for a counter clients cannot read). Any thread, never blocks.
 * While the daemon lives it does not fail: past the page's stale limit it
 * extrapolates on the counter, and with the source's alarm raised it runs
 * on the kernel's CLOCK_MONOTONIC from the last update. -EAGAIN only
 * before the first publication.
 */
int tk_clock_ns(const struct timekeeper *tk, bool realtime, uint64_t *ns);
/* The page's jiffies_64, any thread. */
uint64_t tk_clock_jiffies(const struct timekeeper *tk);

/* Kernel CLOCK_MONOTONIC deadline of the next tick, ns. */
int64_t tk_next_tick_deadline(const struct timekeeper *tk);

#endif
