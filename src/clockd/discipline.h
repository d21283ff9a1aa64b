/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The discipline: steers clockd's clocks to a reference (a PPS edge marks
 * a whole second; a PHC gives the reference's time), as chronyd steers the
 * system clock.
 *
 * Choice: not a PI servo but a least-squares line through the recent
 * offsets of the *uncorrected* clock to the reference (each measured
 * offset minus the corrections applied so far), chrony's approach. The
 * slope is the rate error, the line's value now the offset: the next
 * interval's rate correction removes both. With white jitter on the
 * reference the rate error of a fit over N events falls as N^-1.5 and its
 * offset as N^-0.5, where a PI loop must trade its bandwidth (lock time)
 * against its noise.
 *
 * How many offsets: as many as still lie on one line, up to DISC_HISTORY.
 * After each event a runs test (as chrony's regression does) counts the
 * runs of residuals of one sign: white jitter about a right line gives
 * about N/2 of them; a line bent by a change of rate gives long runs. While
 * the runs are fewer than white residuals give with a 3-sigma margin (or
 * the older and newer halves run at rates 3 standard errors apart), the
 * history is cut where the rate changed: before the split into an older
 * and a newer part that two lines fit best (the least sum of squared
 * residuals; the oldest eighth if too few offsets to tell; not below 16
 * offsets), so the window grows while the reference and the counter keep
 * their rates, and lets go of the old rate, and only of it, when they
 * change.
 *
 * At the start the offset is stepped (CLOCKD_REALTIME only: monotonic time
 * is never stepped) when larger than discipline_step_ms; later steps only
 * above discipline_restep_ms (0: never), logged. The rate correction never
 * exceeds discipline_max_ppm. A pulse less than half a second after the
 * last is spurious. An offset far off the line (an outlier: more than 6
 * times the spread and 200 us) is dropped; four in a row more than 1 ms
 * off, or sixteen in a row less far off, mean the reference moved and
 * restart the acquisition. "The line" for that is a robust one (Theil-Sen:
 * the median of the pairwise slopes, with the median absolute residual as
 * the spread), which outliers cannot drag as they drag least squares;
 * outliers that came in before there were enough offsets to tell (5) are
 * dropped from the history once there are. An offset less far off the
 * robust line but more than 5 spreads (and 1 us) is trimmed: it stays in
 * the history but out of the least-squares fit (and the runs test), as
 * chrony's sample filter drops the samples farthest from the median, so
 * that one pulse stamped 150 us late at 10 us of jitter cannot tilt the
 * rate estimate (holdover runs on it); the newest four or more in a row
 * on one side are a move of the reference instead, and fitted. Locked
 * takes four offsets under 100 us in a row; losing the lock, four over
 * 1 ms. With no event for three seconds (dropped ones count: the
 * reference is not silent) a locked clock goes into holdover: SYNCED is
 * cleared and the rate becomes the frequency estimate alone (the phase
 * term, slewing out an offset no longer measured, stops); events again
 * take it back to locked.
 *
 * The error bound (error_bound_ns, every tick while locked or in
 * holdover) is the offset predicted now (the last estimate less the phase
 * slewed out since) plus 4 standard errors of that estimate, plus 4 skews
 * and 0.1 ppm of wander times the time since the last event, plus, after
 * a dropped outlier or while the newest offset is trimmed, how far off it
 * was: the reference may have moved; plus, for a sampled reference
 * (system), the half-width of the last sample's bracket.
 *
 * The system reference (the kernel's CLOCK_REALTIME, references/system.c)
 * is near noiseless and sampled every few ms: its driver asks for a short
 * history (a change of the kernel's rate, a slew starting, is followed in
 * tens of ms, not seconds) and a faster phase gain. Steps of the kernel's
 * time are the timekeeper's to follow (tk_follow_wall, at once); a sample
 * taken across a step it has not followed yet is dropped.
 */
#ifndef CLOCKD_DISCIPLINE_H
#define CLOCKD_DISCIPLINE_H

#include <stdbool.h>
#include <stdint.h>

#include "clockd/references/reference.h"
#include "clockd/timekeeper.h"
#define DISC_HISTORY 512       /* the longest history the fit may use */
#define DISC_ROBUST_WINDOW 64  /* the newest offsets the robust line looks at */

/* What the discipline takes from the configuration. */
struct discipline_params {
	uint32_t step_ms;   /* discipline_step_ms: step, not slew, an offset beyond it at start */
	uint32_t restep_ms; /* discipline_restep_ms: ... and once locked */
	uint32_t max_ppm;   /* discipline_max_ppm: the largest rate correction */
};

struct discipline {
	struct timekeeper *tk;
	struct pagefile *pf;
	const char *ref_name;
	bool pps;                 /* events mark whole seconds */
	bool kernel;              /* the reference is the kernel's clock (system) */
	double slew_gain;         /* of the offset slewed out per second */
	double half_ns;           /* the last event's bracket half-width */
	int64_t step_ns, restep_ns, max_ppb;
	bool stepped;             /* the start step is done (or not needed) */
	/* the fit's history: event time (s since the first), uncorrected offset (ns) */
	double t0_ns;             /* kernel CLOCK_MONOTONIC of the first event */
	double hist_t[DISC_HISTORY], hist_y[DISC_HISTORY]; /* in time order */
	bool hist_trim[DISC_HISTORY]; /* left out of the fit: far off the robust line */
	bool trim;                /* trimming on (else every offset is fitted) */
	unsigned n;
	/* The history's length: up to window_max offsets, cut back from the
	 * oldest while their residuals are not white (adaptive; else always
	 * window_max, the fixed window of clockd 0.3: 64). */
	unsigned window_max;
	bool adaptive;
	double scratch[DISC_ROBUST_WINDOW * (DISC_ROBUST_WINDOW - 1) / 2]; /* the robust line's slopes */
	double corr_ns;           /* corrections applied so far (phase) */
	double freq_ppb;          /* correction applied since the last event */
	int64_t last_stamp;       /* of the last accepted event */
	int64_t corr_stamp;       /* of the last event: corr_ns counts up to it */
	double last_sample_ns;    /* the last measured offset (raw) */
	double ms_est;            /* mean square of the estimated offsets */
	double resid_sd;          /* of the fit */
	/* The error bound's terms, as of the last accepted event: */
	double est_ns, est_sd;    /* the offset estimated then, its standard error */
	double skew_ppb;          /* the standard error of the rate estimate */
	double freq_est_ppb;      /* the rate estimate (the correction it needs) */
	double phase_ppb;         /* the phase term of the rate applied since */
	int64_t phase_from, phase_to; /* when it ran (phase_to 0: it still does) */
	double doubt_ns;          /* outliers dropped since: how far they were */
	unsigned good, bad, outliers_in_row;
	uint64_t events, spurious, outliers;
	bool clamp_logged, beyond_logged;
	struct tk_tracking track;  /* what it publishes (tk_set_tracking) */
};

void discipline_init(struct discipline *d, struct timekeeper *tk, struct pagefile *pf,
		     const struct reference *ref, const struct discipline_params *p);
/* A reference event: measure, fit, steer. Tick thread. */
void discipline_event(struct discipline *d, const struct ref_event *ev);
/* Every tick: notice a silent or faulted reference. */
void discipline_check(struct discipline *d, uint32_t ref_fault, int64_t now_ns);

#endif
