/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <clockd/page.h>
#include "clockd/discipline.h"
#include "clockd/events.h"
#include "shared/devnames.h"
#include "shared/log.h"
#include "shared/tickmath.h"

#define NS 1e9
#define LOCK_NS 100000.0       /* |offset| below this, four times: locked */
#define UNLOCK_NS 1000000.0    /* once locked, above this four times: unlocked */
#define LOCK_EVENTS 8          /* and at least this many events in the fit */
#define LOST_NS 3000000000ll   /* no event for this long: reference lost */
#define OUTLIER_MIN_NS 200000.0 /* an offset this far off the line (and */
#define OUTLIER_SDS 6.0        /* this many times the spread) is an outlier */
#define ROBUST_MIN 5           /* offsets needed to tell an outlier */
#define OUTLIERS_RESTART 4     /* outliers in a row: the reference moved */
#define OUTLIERS_RESTART_SMALL 16 /* the same, for a move under UNLOCK_NS */
#define RUNS_MIN_WINDOW 16     /* the runs test never cuts the history below this */
#define RUNS_SDS 3.0           /* fewer runs than the mean less this many sds: not white */
#define TRIM_SDS 5.0           /* an offset this many spreads off the robust line, */
#define TRIM_MIN_NS 1000.0     /* and this far, is left out of the fit */
#define TRIM_MOVE 4            /* ... unless it is one of this many in a row, the newest */
#define SPLIT_MIN 8            /* offsets on either side of a split of the history */
#define SLEW_GAIN 0.5          /* of the estimated offset removed per second */
#define BOUND_SDS 4.0          /* standard errors in the error bound */
#define HOLDOVER_WANDER_PPB 100.0 /* the rate's wander beyond its estimate, in the bound */
#define POLLED_HISTORY_MIN 4.0 /* the shortest history of a polled reference */
#define POLLED_GAIN_PER_SAMPLE 0.25 /* a polled reference's phase gain, at most, per sample */
#define WALL_MOVED_NS 10000.0  /* a sample's wall offset this far from the one followed: a step */

static void set_synced(struct discipline *d, bool on)
{
	if (on)
		pagefile_flags_set(d->pf, CLOCKD_PAGE_SYNCED);
	else
		pagefile_flags_clear(d->pf, CLOCKD_PAGE_SYNCED);
}

static void set_state(struct discipline *d, uint32_t s)
{
	struct tk_tracking *tr = &d->track;
	char f[256];

	if (tr->state == s)
		return;
	snprintf(f, sizeof(f), "CLOCKD_REFERENCE=%s\nCLOCKD_STATE=%s\nCLOCKD_STATE_BEFORE=%s\nCLOCKD_OFFSET_NS=%.0f\n"
		 "CLOCKD_FREQUENCY_PPM=%.3f", d->ref_name, disc_state_name(s), disc_state_name(tr->state),
		 (double)tr->offset_ns, d->freq_ppb / 1000.0);
	log_event(LOG_NOTICE, EV_STATE, f, "reference %s: %s -> %s (offset %+.0f ns, frequency %+.3f ppm)",
		  d->ref_name, disc_state_name(tr->state), disc_state_name(s), (double)tr->offset_ns,
		  d->freq_ppb / 1000.0);
	/* The RMS offset of a lock is that of the lock, not of the
	 * acquisition before it. */
	if (s == CLOCKD_DISC_LOCKED && tr->state != CLOCKD_DISC_HOLDOVER) {
		d->ms_est = (double)tr->offset_ns * (double)tr->offset_ns;
		tr->rms_offset_ns = tr->offset_ns < 0 ? -tr->offset_ns : tr->offset_ns;
	}
	tr->state = s;
	tk_set_tracking(d->tk, tr);
	set_synced(d, s == CLOCKD_DISC_LOCKED);
}

void discipline_init(struct discipline *d, struct timekeeper *tk, struct pagefile *pf,
		     const struct reference *ref, const struct discipline_params *p)
{
	memset(d, 0, sizeof(*d));
	d->tk = tk;
	d->pf = pf;
	d->ref_name = ref->name;
	d->track.state = ref->name ? CLOCKD_DISC_UNLOCKED : CLOCKD_DISC_NONE;
	tk_set_tracking(tk, &d->track);
	/* Steps of the kernel's time (timekeeper.h): the reference's phase
	 * wins over them, but for the kernel's own clock. */
	tk_set_wall_follow(tk, !ref->name || ref->drv->kernel ? TK_WALL_ALL :
			       ref->drv->pps ? TK_WALL_SECONDS : TK_WALL_NONE);
	if (!ref->name)
		return;
	d->pps = ref->drv->pps;
	d->kernel = ref->drv->kernel;
	d->window_max = ref->drv->history ? ref->drv->history : DISC_HISTORY;
	d->slew_gain = ref->drv->slew_gain > 0 ? ref->drv->slew_gain : SLEW_GAIN;
	/* A polled reference is sampled at most once a tick: at a low HZ its
	 * gain must stay a fraction of the offset per sample (a gain of 1 a
	 * sample or more would overshoot). */
	if (ref->drv->poll_ns) {
		double period = fmax((double)ref->drv->poll_ns, NS / tk->hz);

		d->slew_gain = fmin(d->slew_gain, POLLED_GAIN_PER_SAMPLE * NS / period);
		/* ... and its history keeps its span in time (the lag of the
		 * fit behind a change of rate), down to POLLED_HISTORY_MIN. */
		d->window_max = (unsigned)fmax(POLLED_HISTORY_MIN,
					       floor(d->window_max * (double)ref->drv->poll_ns / period));
	}
	d->step_ns = (int64_t)p->step_ms * 1000000;
	d->restep_ns = (int64_t)p->restep_ms * 1000000;
	d->max_ppb = (int64_t)p->max_ppm * 1000;
	d->adaptive = true;
	d->trim = true;
	set_synced(d, false);
}

/* The least-squares line through the history, seen from @t (s). */
struct disc_fit {
	double slope;  /* ppb: the uncorrected clock's rate against the reference */
	double at;     /* the line's value at t, ns */
	double sd;     /* of the residuals, ns */
	double at_sd;  /* standard error of @at, ns */
	double skew;   /* standard error of @slope, ppb */
	unsigned runs; /* of residuals of one sign, in time order */
	unsigned n;    /* offsets fitted (not trimmed) */
};

/* The least-squares slope of the offsets [from, to) that are not trimmed:
 * their mean time and offset, sxx, and how many there are. */
static double line_of(const struct discipline *d, unsigned from, unsigned to, double *mt, double *my,
		      double *sxx, unsigned *n)
{
	double sxy = 0;

	*mt = *my = *sxx = 0;
	*n = 0;
	for (unsigned i = from; i < to; i++) {
		if (d->hist_trim[i])
			continue;
		*mt += d->hist_t[i];
		*my += d->hist_y[i];
		++*n;
	}
	if (*n == 0)
		return 0;
	*mt /= *n;
	*my /= *n;
	for (unsigned i = from; i < to; i++) {
		if (d->hist_trim[i])
			continue;
		*sxx += (d->hist_t[i] - *mt) * (d->hist_t[i] - *mt);
		sxy += (d->hist_t[i] - *mt) * (d->hist_y[i] - *my);
	}
	return *sxx > 0 ? sxy / *sxx : 0;
}

static void fit(const struct discipline *d, double t, struct disc_fit *fv)
{
	double mt, my, sxx, ss = 0;
	unsigned n;

	fv->slope = line_of(d, 0, d->n, &mt, &my, &sxx, &n);
	fv->n = n;
	fv->at = my + fv->slope * (t - mt);
	fv->runs = 0;
	for (unsigned i = 0, last = 2; i < d->n; i++) {
		double r = d->hist_y[i] - (my + fv->slope * (d->hist_t[i] - mt));

		if (d->hist_trim[i])
			continue;

		ss += r * r;
		fv->runs += (unsigned)(r >= 0) != last;
		last = r >= 0;
	}
	fv->sd = n > 2 ? sqrt(ss / (n - 2)) : 0;
	fv->skew = sxx > 0 ? fv->sd / sqrt(sxx) : 0;
	fv->at_sd = n > 0 ? fv->sd * sqrt(1.0 / n + (sxx > 0 ? (t - mt) * (t - mt) / sxx : 0)) : 0;
}

/*
 * The error bound at @now_ns: what the clock's error is predicted to be
 * (the offset estimated at the last event, minus the phase slewed out
 * since, while it was), plus BOUND_SDS standard errors of that estimate,
 * plus the rate's (BOUND_SDS skews and HOLDOVER_WANDER_PPB) over the time
 * since the last event, plus the doubt of outliers dropped since: each
 * might be the reference having moved.
 */
static uint64_t bound(const struct discipline *d, int64_t now_ns)
{
	double age = (double)(now_ns - d->last_stamp) / NS;
	int64_t phase_end = d->phase_to ? d->phase_to : now_ns;
	double slewed = phase_end > d->phase_from ? (double)(phase_end - d->phase_from) / NS : 0;
	double b;

	if (age < 0)
		age = 0;
	b = fabs(d->est_ns + d->phase_ppb * slewed) + BOUND_SDS * d->est_sd +
	    (BOUND_SDS * d->skew_ppb + HOLDOVER_WANDER_PPB) * age + d->doubt_ns + d->half_ns;
	/* The kernel's clock has no jitter of its own: the newest sample's
	 * distance from the line is the clock's error (a change of the
	 * kernel's rate the fit has not caught up with). */
	if (d->kernel)
		b += fabs(d->last_sample_ns - d->est_ns);
	return (uint64_t)llround(b);
}

/* The measured offset of clockd's realtime to the reference at @ev, ns. */
static double measure(struct discipline *d, const struct ref_event *ev)
{
	/* A sample at a counter value: clockd's time there, exactly. */
	int64_t real = ev->counter ? tk_real_at_cycles(d->tk, ev->cycles) : tk_real_at(d->tk, ev->stamp_ns);

	if (!d->pps)
		return (double)(real - ev->ref_real_ns);
	/* An edge marks a whole second: the offset is the distance to the
	 * nearest one. */
	int64_t frac = real % (int64_t)NSEC_PER_SEC;

	if (frac < 0)
		frac += NSEC_PER_SEC;
	return (double)(frac >= (int64_t)NSEC_PER_SEC / 2 ? frac - (int64_t)NSEC_PER_SEC : frac);
}

/* Drop @count offsets from @i on. */
static void history_drop_n(struct discipline *d, unsigned i, unsigned count)
{
	memmove(d->hist_t + i, d->hist_t + i + count, (d->n - i - count) * sizeof(d->hist_t[0]));
	memmove(d->hist_y + i, d->hist_y + i + count, (d->n - i - count) * sizeof(d->hist_y[0]));
	memmove(d->hist_trim + i, d->hist_trim + i + count, (d->n - i - count) * sizeof(d->hist_trim[0]));
	d->n -= count;
}

static void history_drop(struct discipline *d, unsigned i)
{
	history_drop_n(d, i, 1);
}

/* The history is in time order, the oldest first; a full one drops it. */
static void history_add(struct discipline *d, double t, double y)
{
	if (d->n >= d->window_max)
		history_drop_n(d, 0, d->n - d->window_max + 1);
	d->hist_t[d->n] = t;
	d->hist_y[d->n] = y;
	d->hist_trim[d->n] = false;
	d->n++;
}

/* The least-squares slope of offsets [from, to) and its sxx. */
static double slope_of(const struct discipline *d, unsigned from, unsigned to, double *sxx)
{
	double mt, my;
	unsigned n;

	return line_of(d, from, to, &mt, &my, sxx, &n);
}

/* Whether the older and the newer half of the history run at rates more
 * than RUNS_SDS standard errors apart (residual spread @sd): a change of
 * rate, which the runs test sees late when it is recent. */
static bool halves_differ(const struct discipline *d, double sd)
{
	double sxx_old, sxx_new, s_old = slope_of(d, 0, d->n / 2, &sxx_old),
	       s_new = slope_of(d, d->n / 2, d->n, &sxx_new);

	if (sxx_old <= 0 || sxx_new <= 0)
		return false;
	return fabs(s_new - s_old) > RUNS_SDS * sd * sqrt(1 / sxx_old + 1 / sxx_new);
}

/* The residual sum of squares of the least-squares line through n points
 * with these sums: of 1, t, t^2, r, t r, r^2. */
static double ssr_of(const double *a)
{
	double sxx = a[2] - a[1] * a[1] / a[0], sxy = a[4] - a[1] * a[3] / a[0], syy = a[5] - a[3] * a[3] / a[0];

	return a[0] < 3 || sxx <= 0 ? 0 : fmax(syy - sxy * sxy / sxx, 0);
}

static void sums_add(double *a, double t, double r)
{
	a[0] += 1;
	a[1] += t;
	a[2] += t * t;
	a[3] += r;
	a[4] += t * r;
	a[5] += r * r;
}

_Static_assert(sizeof(((struct discipline *)0)->scratch) >= 2 * DISC_HISTORY * sizeof(double),
	       "the split's times and residuals fit in the scratch space");

/*
 * Where the history breaks: the split into an older and a newer part (of
 * SPLIT_MIN fitted offsets each at least) that two separate lines fit
 * best, the smallest sum of their residuals' squares. After a change of
 * rate, that is about where it came. Returns the index of the newer part's
 * first offset, 0 with too few offsets to tell. Over the residuals of the
 * one line (small numbers: the sums keep their precision).
 */
static unsigned history_split(struct discipline *d)
{
	double *t = d->scratch, *r = d->scratch + DISC_HISTORY;
	double mt, my, sxx, slope, all[6] = { 0 }, old[6] = { 0 }, best = INFINITY;
	unsigned m = 0, fitted, at = 0, idx[DISC_HISTORY];

	slope = line_of(d, 0, d->n, &mt, &my, &sxx, &fitted);
	for (unsigned i = 0; i < d->n; i++) {
		if (d->hist_trim[i])
			continue;
		t[m] = d->hist_t[i] - mt;
		r[m] = d->hist_y[i] - my - slope * t[m];
		sums_add(all, t[m], r[m]);
		idx[m++] = i;
	}
	if (m < 2 * SPLIT_MIN)
		return 0;
	for (unsigned j = 0; j + SPLIT_MIN <= m; j++) {
		if (j >= SPLIT_MIN) {
			double newer[6], ssr;

			for (unsigned k = 0; k < 6; k++)
				newer[k] = all[k] - old[k];
			ssr = ssr_of(old) + ssr_of(newer);
			if (ssr < best) {
				best = ssr;
				at = j;
			}
		}
		sums_add(old, t[j], r[j]);
	}
	return idx[at];
}

/*
 * The runs test: N residuals of random signs make (N + 1) / 2 runs on
 * average, with a variance of (N - 1) / 4. Fewer than RUNS_SDS sds below
 * that, or halves at different rates, the line does not fit the oldest
 * offsets: drop those before the history's best split (where the rate
 * changed; the oldest eighth when there are too few to tell), and test
 * again. Cutting an eighth at a time kept offsets of the old rate, or cut
 * into the new one: after a 0.5 ppm change that cost 0.3 us of RMS error.
 */
static void history_trim(struct discipline *d)
{
	while (d->adaptive && d->n > RUNS_MIN_WINDOW) {
		struct disc_fit fv;
		double mean, sd;
		unsigned cut;

		fit(d, 0, &fv);
		mean = (fv.n + 1) / 2.0;
		sd = sqrt((fv.n - 1) / 4.0);
		if ((double)fv.runs >= mean - RUNS_SDS * sd && !halves_differ(d, fv.sd))
			break;
		cut = history_split(d);
		if (cut == 0)
			cut = d->n / 8 > 0 ? d->n / 8 : 1;
		history_drop_n(d, 0, cut < d->n - RUNS_MIN_WINDOW ? cut : d->n - RUNS_MIN_WINDOW);
	}
}

/* How many of the newest offsets the robust line looks at. */
static unsigned robust_n(const struct discipline *d)
{
	return d->n < DISC_ROBUST_WINDOW ? d->n : DISC_ROBUST_WINDOW;
}

/* The k-th smallest of a[0..n) (quickselect, Lomuto's partition about
 * the middle element; reorders a). */
static double kth(double *a, unsigned n, unsigned k)
{
	int lo = 0, hi = (int)n - 1;

	while (lo < hi) {
		int mid = lo + (hi - lo) / 2, store = lo;
		double pivot = a[mid], x;

		a[mid] = a[hi];
		a[hi] = pivot;
		for (int i = lo; i < hi; i++) {
			if (a[i] < pivot) {
				x = a[i];
				a[i] = a[store];
				a[store++] = x;
			}
		}
		a[hi] = a[store];
		a[store] = pivot;
		if ((int)k == store)
			break;
		if ((int)k < store)
			hi = store - 1;
		else
			lo = store + 1;
	}
	return a[k];
}

/*
 * The robust line through the history (Theil-Sen: the median of the slopes
 * between all pairs, then the median intercept), and the robust spread of
 * the offsets about it (1.4826 x the median absolute residual, the sd for
 * normal jitter). Up to 29 % of the offsets may be arbitrarily far off
 * without moving it, where one offset held up by 70 ms drags a
 * least-squares line tens of ppm off. Over the newest DISC_ROBUST_WINDOW
 * offsets (it costs their number squared). Needs d->n >= ROBUST_MIN.
 */
static void robust_line(struct discipline *d, double *slope, double *icpt, double *spread)
{
	double *w = d->scratch;
	unsigned n = robust_n(d), m = 0;
	const double *t = d->hist_t + d->n - n, *y = d->hist_y + d->n - n;

	for (unsigned i = 0; i < n; i++)
		for (unsigned j = i + 1; j < n; j++)
			if (t[j] > t[i])
				w[m++] = (y[j] - y[i]) / (t[j] - t[i]);
	*slope = m ? kth(w, m, m / 2) : 0;
	for (unsigned i = 0; i < n; i++)
		w[i] = y[i] - *slope * t[i];
	*icpt = kth(w, n, n / 2);
	for (unsigned i = 0; i < n; i++)
		w[i] = fabs(y[i] - (*icpt + *slope * t[i]));
	*spread = 1.4826 * kth(w, n, n / 2);
}

/* How far off the robust line an offset may be. */
static double outlier_limit(double spread)
{
	return fmax(OUTLIER_SDS * spread, OUTLIER_MIN_NS);
}

/* Drop the offsets far off the robust line, worst first, at most a
 * quarter of the history: those that came in before there were enough to
 * tell (the first ROBUST_MIN) or while the line was still moving. */
static void history_prune(struct discipline *d)
{
	for (unsigned dropped = 0; d->n >= ROBUST_MIN && dropped < robust_n(d) / 4; dropped++) {
		double slope, icpt, spread, worst = 0;
		unsigned at = 0;

		robust_line(d, &slope, &icpt, &spread);
		for (unsigned i = d->n - robust_n(d); i < d->n; i++) {
			double r = fabs(d->hist_y[i] - (icpt + slope * d->hist_t[i]));

			if (r > worst) {
				worst = r;
				at = i;
			}
		}
		if (worst <= outlier_limit(spread))
			return;
		log_debug("reference %s: an offset %+.0f ns off the line dropped from the history", d->ref_name,
			  d->hist_y[at] - (icpt + slope * d->hist_t[at]));
		history_drop(d, at);
		d->outliers++;
	}
}

/*
 * Trim the fit, as chrony's sample filter drops the offsets farthest from
 * the median before it averages: an offset in the robust line's window
 * more than TRIM_SDS spreads (and TRIM_MIN_NS) off that line is left out
 * of the least-squares fit, though it is not far enough off to be an
 * outlier (the pulse was stamped 150 us late, at 10 us of jitter). Kept
 * in, one such offset near the end of a short history tilts the rate
 * estimate that holdover runs on (its leverage: 150 us at the end of 37
 * offsets is 0.64 ppm). An offset that left the robust line's window
 * keeps its mark. The newest TRIM_MOVE or more, far off on one side in a
 * row, are a move of the reference, not trimmed: the fit follows it, and
 * the runs test lets go of the older offsets. While the newest offset is
 * trimmed, the bound adds how far off it is: it may be the first of a
 * move.
 */
static void history_mark_trimmed(struct discipline *d)
{
	double slope, icpt, spread, limit, r = 0;
	unsigned from = d->n - robust_n(d), run = 0;

	if (!d->trim || d->n < ROBUST_MIN)
		return;
	robust_line(d, &slope, &icpt, &spread);
	limit = fmax(TRIM_SDS * spread, TRIM_MIN_NS);
	for (unsigned i = from; i < d->n; i++)
		d->hist_trim[i] = fabs(d->hist_y[i] - (icpt + slope * d->hist_t[i])) > limit;
	for (unsigned i = d->n; i-- > from && d->hist_trim[i]; run++) {
		double ri = d->hist_y[i] - (icpt + slope * d->hist_t[i]);

		if (run > 0 && (ri > 0) != (r > 0))
			break;
		r = ri;
	}
	if (run >= TRIM_MOVE) {
		memset(d->hist_trim + d->n - run, 0, run * sizeof(d->hist_trim[0]));
	} else if (d->hist_trim[d->n - 1]) {
		r = d->hist_y[d->n - 1] - (icpt + slope * d->hist_t[d->n - 1]);
		log_debug("reference %s: an offset %+.0f ns off the line left out of the fit", d->ref_name, r);
		d->doubt_ns = fmax(d->doubt_ns, fabs(r) + BOUND_SDS * spread);
	}
}

static void step(struct discipline *d, double x, const char *why)
{
	char f[256];

	tk_step_real(d->tk, (int64_t)-x);
	d->corr_ns -= x;
	snprintf(f, sizeof(f), "CLOCKD_REFERENCE=%s\nCLOCKD_STEP_NS=%.0f\nCLOCKD_REASON=%s", d->ref_name, -x, why);
	log_event(LOG_NOTICE, EV_STEP, f, "reference %s: CLOCKD_REALTIME stepped by %+.0f ns (%s)", d->ref_name, -x,
		  why);
}

/* An event that does not fit: false to drop it. */
static bool plausible(struct discipline *d, const struct ref_event *ev, double t, double y)
{
	double slope, icpt, spread, r;

	if (d->pps && d->last_stamp && ev->stamp_ns - d->last_stamp < (int64_t)NSEC_PER_SEC / 2) {
		if (d->spurious++ == 0)
			log_notice("reference %s: a pulse %.3f s after the last is spurious: dropped "
				   "(further ones are counted)", d->ref_name,
				   (double)(ev->stamp_ns - d->last_stamp) / NS);
		return false;
	}
	if (d->n < ROBUST_MIN)
		return true;
	robust_line(d, &slope, &icpt, &spread);
	r = y - (icpt + slope * t);
	if (fabs(r) <= outlier_limit(spread)) {
		d->outliers_in_row = 0;
		return true;
	}
	d->outliers++;
	/* It may be the reference that moved: the bound says so. */
	d->doubt_ns = fmax(d->doubt_ns, fabs(r) + BOUND_SDS * spread);
	/* A move smaller than what loses a lock must last longer to be
	 * believed: a noisy reference (a PPS stamped by a loaded machine) has
	 * runs of late pulses that are no move. */
	if (++d->outliers_in_row < (fabs(r) > UNLOCK_NS ? OUTLIERS_RESTART : OUTLIERS_RESTART_SMALL)) {
		log_debug("reference %s: outlier %+.0f ns off the line dropped", d->ref_name, r);
		return false;
	}
	log_warnx("reference %s: %u offsets in a row far off the line (now %+.0f ns): the reference "
		  "moved; acquiring again", d->ref_name, d->outliers_in_row, r);
	d->n = 0;
	d->outliers_in_row = 0;
	d->good = d->bad = 0;
	set_state(d, CLOCKD_DISC_ACQUIRING);
	return true;
}

/* The rate correction has run since the last event, dropped or not
 * (counting from the last accepted one would count it twice). */
static void corrections_to(struct discipline *d, int64_t stamp_ns)
{
	if (d->corr_stamp == 0)
		d->t0_ns = (double)stamp_ns;
	else
		d->corr_ns += d->freq_ppb * (double)(stamp_ns - d->corr_stamp) / NS;
	d->corr_stamp = stamp_ns;
}

/* Apply rate @f (ppb) from the timekeeper's last update (the old one ran
 * until then). */
static void rate_set(struct discipline *d, double f)
{
	if (d->tk->kernel_mono_ns > d->corr_stamp)
		corrections_to(d, d->tk->kernel_mono_ns);
	d->freq_ppb = f;
	tk_set_freq(d->tk, (int64_t)llround(f));
}

/* The step seam: the start step, a restep, or the warning that neither
 * will come. @at is the line's uncorrected value now; returns the
 * estimated offset now. */
static double step_check(struct discipline *d, double at)
{
	double x = at + d->corr_ns;

	if (!d->stepped) {
		d->stepped = true;
		if (fabs(x) > (double)d->step_ns)
			step(d, x, "the offset at the start is above discipline_step_ms");
	} else if (d->restep_ns && fabs(x) > (double)d->restep_ns && d->n >= 4) {
		step(d, x, "the offset is above discipline_restep_ms");
	} else if (!d->restep_ns && fabs(x) > (double)d->step_ns && !d->beyond_logged) {
		d->beyond_logged = true;
		log_warnx("reference %s: offset %+.0f ns is above discipline_step_ms; slewing (no step: "
			  "discipline_restep_ms is 0)", d->ref_name, x);
	}
	return at + d->corr_ns;
}

/* The rate seam: the frequency estimate (-slope) plus the phase term that
 * slews out SLEW_GAIN of offset @x a second, within discipline_max_ppm. */
static void steer(struct discipline *d, const struct disc_fit *fv, double x)
{
	double f;

	/* The reference's rate beyond the limit is a fault of the reference
	 * (or of the counter); a large offset slewed at the limit is not. */
	if (d->n >= 2 * LOCK_EVENTS && fabs(fv->slope) - 3 * fv->skew > (double)d->max_ppb && !d->clamp_logged) {
		d->clamp_logged = true;
		log_warnx("reference %s: it runs %+.3f ppm off clockd's clock, beyond discipline_max_ppm "
			  "(%lld): the rate is held at the limit and the clock cannot lock", d->ref_name,
			  -fv->slope / 1000.0, (long long)d->max_ppb / 1000);
	}
	f = -fv->slope - d->slew_gain * x;
	if (fabs(f) > (double)d->max_ppb)
		f = f > 0 ? (double)d->max_ppb : -(double)d->max_ppb;
	d->phase_ppb = f + fv->slope;
	rate_set(d, f);
}

/* The lock seam. Hysteresis: a lock takes four offsets under LOCK_NS;
 * losing it takes four in a row over UNLOCK_NS. */
static void lock_update(struct discipline *d, double x)
{
	uint32_t s = d->track.state;

	d->good = fabs(x) < LOCK_NS ? d->good + 1 : 0;
	d->bad = fabs(x) > UNLOCK_NS ? d->bad + 1 : 0;
	if (s == CLOCKD_DISC_LOCKED || s == CLOCKD_DISC_HOLDOVER)
		set_state(d, d->bad >= 4 ? CLOCKD_DISC_ACQUIRING : CLOCKD_DISC_LOCKED);
	else
		set_state(d, d->n >= (d->window_max < LOCK_EVENTS ? d->window_max : LOCK_EVENTS) && d->good >= 4 ?
				     CLOCKD_DISC_LOCKED : CLOCKD_DISC_ACQUIRING);
}

/* What clockctl tracking shows, as of the event at @stamp_ns. */
static void publish(struct discipline *d, const struct disc_fit *fv, double x, int64_t stamp_ns)
{
	struct tk_tracking *tr = &d->track;

	d->ms_est = d->events == 1 ? x * x : d->ms_est + (x * x - d->ms_est) / 16;
	d->resid_sd = fv->sd;
	d->est_ns = x;
	d->est_sd = fv->at_sd;
	d->skew_ppb = fv->skew;
	d->freq_est_ppb = -fv->slope;
	tr->offset_ns = (int64_t)llround(x);
	/* The rate estimate, without the phase being slewed out. */
	tr->freq_ppb = (int64_t)llround(-fv->slope);
	tr->rms_offset_ns = (int64_t)llround(sqrt(d->ms_est));
	tr->skew_ppb = (int64_t)llround(fv->skew);
	tr->error_bound_ns = bound(d, stamp_ns);
	tk_set_tracking(d->tk, tr);
}

void discipline_event(struct discipline *d, const struct ref_event *ev)
{
	struct disc_fit fv = { 0 };
	double t, o, y, x;

	if (!d->ref_name)
		return;
	/* The kernel's time was stepped and the timekeeper has not followed
	 * yet (it does at the next update): the sample is not comparable. */
	if (ev->counter && fabs((double)(ev->wall_ns - d->tk->kernel_wall_ns)) > WALL_MOVED_NS)
		return;
	corrections_to(d, ev->stamp_ns);
	/* An event dropped is an event: the reference is not silent. */
	d->track.ref_mono_ns = ev->stamp_ns;
	tk_set_tracking(d->tk, &d->track);
	t = ((double)ev->stamp_ns - d->t0_ns) / NS;
	o = measure(d, ev);
	y = o - d->corr_ns;
	if (!plausible(d, ev, t, y))
		return;
	d->last_stamp = ev->stamp_ns;
	d->last_sample_ns = o;
	d->half_ns = ev->half_ns;
	d->events++;
	d->doubt_ns = 0;
	d->phase_from = ev->stamp_ns;
	d->phase_to = 0;
	history_add(d, t, y);
	history_prune(d);
	history_mark_trimmed(d);
	history_trim(d);
	fit(d, t, &fv);
	x = step_check(d, fv.at);
	steer(d, &fv, x);
	publish(d, &fv, x, ev->stamp_ns);
	lock_update(d, x);
}

/* Silence: the rate becomes the frequency estimate alone, so that the
 * clock runs on at its best estimate of the reference's rate instead of
 * slewing an offset that is no longer measured. */
static void holdover_enter(struct discipline *d)
{
	d->phase_ppb = 0;
	rate_set(d, fmax(fmin(d->freq_est_ppb, (double)d->max_ppb), -(double)d->max_ppb));
	d->phase_to = d->tk->kernel_mono_ns;
}

void discipline_check(struct discipline *d, uint32_t ref_fault, int64_t now_ns)
{
	struct tk_tracking *tr = &d->track;

	if (!d->ref_name)
		return;
	/* Silence is no event at all: events dropped as outliers are the
	 * reference speaking (the rules above deal with them). */
	if (ref_fault != CLOCKD_FAULT_NONE || (d->corr_stamp && now_ns - d->corr_stamp > LOST_NS)) {
		d->good = 0;
		if (tr->state == CLOCKD_DISC_LOCKED) {
			holdover_enter(d);
			set_state(d, CLOCKD_DISC_HOLDOVER);
		} else if (tr->state == CLOCKD_DISC_ACQUIRING) {
			set_state(d, CLOCKD_DISC_UNLOCKED);
		}
	}
	if (d->last_stamp && (tr->state == CLOCKD_DISC_LOCKED || tr->state == CLOCKD_DISC_HOLDOVER)) {
		tr->error_bound_ns = bound(d, now_ns);
		tk_set_tracking(d->tk, tr);
	}
}
