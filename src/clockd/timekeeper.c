/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "clockd/timekeeper.h"
#include "shared/latch.h"
#include "shared/pagetime.h"
#include "shared/log.h"
#include "shared/tickmath.h"

/* A change of the kernel's wall offset larger than this is a step of the
 * system time that CLOCKD_REALTIME follows. Reading the two kernel clocks
 * one after the other costs tens of ns, so smaller changes are noise; they
 * are not lost, they add up until they pass this. */
#define WALL_STEP_NS 10000
/* A wall offset sample is good when its bracket is this tight (a few vDSO
 * reads take well under a microsecond). */
#define WALL_SAMPLE_MAX_NS 2000
#define WALL_SAMPLE_TRIES 4
/* With a reference, steps of the system time below this are not followed. */
#define WALL_STEP_REF_NS 500000000

/* A rate change that slows the clock pivots this far ahead of the update
 * (see tk_set_rate), in ns of counter time: a reader still using the old
 * rate up to this long after the daemon read the counter never sees time
 * go back. Publishing takes well under a microsecond. */
#define RATE_PIVOT_NS 1000000ull

/* A counter that moves more than this (plus 1/16 of the interval, room for
 * any rate error a device could honestly have, plus the time the two
 * updates' reads took) away from the kernel's CLOCK_MONOTONIC between two
 * updates has jumped. */
#define STEP_FAULT_NS 20000000ll

/* A counter read that took longer than this (the thread preempted, a
 * device access held up: a 22 ms one was seen under qemu TCG) is done
 * again, up to READ_TRIES times, for a reading close to the kernel's. */
#define READ_SLACK_NS 1000000ll
#define READ_TRIES 3

static uint64_t one_sec(const struct timekeeper *tk)
{
	return NSEC_PER_SEC << tk->shift;
}

static void base_add(struct timekeeper *tk, struct tk_base *b, unsigned __int128 sns)
{
	unsigned __int128 v = (unsigned __int128)b->snsec + sns;

	/* A tick adds less than a second: no 128-bit division. */
	if (v < 2 * (unsigned __int128)one_sec(tk)) {
		b->snsec = (uint64_t)v;
		snsec_normalise(&b->sec, &b->snsec, tk->shift);
		return;
	}
	b->sec += (int64_t)(v / one_sec(tk));
	b->snsec = (uint64_t)(v % one_sec(tk));
}

static int64_t base_ns(const struct timekeeper *tk, const struct tk_base *b)
{
	return b->sec * (int64_t)NSEC_PER_SEC + (int64_t)(b->snsec >> tk->shift);
}

static void base_set_ns(struct timekeeper *tk, struct tk_base *b, int64_t ns)
{
	struct timespec ts = ns_to_ts(ns);

	b->sec = ts.tv_sec;
	b->snsec = (uint64_t)ts.tv_nsec << tk->shift;
}

/* Step @b by @ns (either sign), keeping its sub-ns fraction. */
static void base_step(struct timekeeper *tk, struct tk_base *b, int64_t ns)
{
	uint64_t frac = b->snsec & ((1ull << tk->shift) - 1);

	base_set_ns(tk, b, base_ns(tk, b) + ns);
	b->snsec |= frac;
}

/*
 * The kernel's wall offset (CLOCK_REALTIME - CLOCK_MONOTONIC), read between
 * two reads of CLOCK_MONOTONIC. A thread preempted between the reads would
 * see a false step of the preemption's length, so only a tight bracket
 * counts; false if none of a few tries gave one (try again next tick).
 */
static bool kernel_wall_sample(int64_t *wall)
{
	for (int i = 0; i < WALL_SAMPLE_TRIES; i++) {
		int64_t m0 = kclock_ns(CLOCK_MONOTONIC);
		int64_t r = kclock_ns(CLOCK_REALTIME);
		int64_t m1 = kclock_ns(CLOCK_MONOTONIC);

		if (m1 - m0 <= WALL_SAMPLE_MAX_NS) {
			*wall = r - (m0 + (m1 - m0) / 2);
			return true;
		}
	}
	return false;
}

/* Follow a step of the kernel's realtime (see timekeeper.h). */
static void tk_follow_wall(struct timekeeper *tk)
{
	int64_t wall, step, kstep;

	if (!kernel_wall_sample(&wall))
		return;
	step = kstep = wall - tk->kernel_wall_ns;
	if (step >= -WALL_STEP_NS && step <= WALL_STEP_NS)
		return;
	tk->kernel_wall_ns = wall;
	/* A hardware reference keeps realtime's phase: a PPS, which says
	 * nothing of the date, takes the whole seconds of a step of the
	 * seconds (someone setting the date); a PHC, which gives the date,
	 * none. */
	if (tk->wall_follow == TK_WALL_SECONDS && (step <= -WALL_STEP_REF_NS || step >= WALL_STEP_REF_NS))
		step = (step + (step > 0 ? 1 : -1) * (int64_t)NSEC_PER_SEC / 2) / (int64_t)NSEC_PER_SEC *
		       (int64_t)NSEC_PER_SEC;
	else if (tk->wall_follow != TK_WALL_ALL)
		step = 0;
	if (step == 0) {
		if (tk->wall_steps++ == 0)
			log_notice("the system time was stepped by %+lld ns; CLOCKD_REALTIME keeps the "
				   "reference's phase (further steps are logged at debug level)", (long long)kstep);
		else
			log_debug("the system time was stepped by %+lld ns; not followed", (long long)kstep);
		return;
	}
	base_step(tk, &tk->real, step);
	if (tk->wall_steps++ == 0)
		log_notice("the system time was stepped by %+lld ns; CLOCKD_REALTIME follows by %+lld ns "
			   "(further steps are logged at debug level)", (long long)kstep, (long long)step);
	else
		log_debug("the system time was stepped by %+lld ns; CLOCKD_REALTIME by %+lld ns (step %llu)",
			  (long long)kstep, (long long)step, (unsigned long long)tk->wall_steps);
}

/* The raw mult corrected by the discipline's frequency, in ppb. */
static uint32_t adjusted_mult(uint32_t raw_m, int64_t ppb)
{
	return (uint32_t)(((__int128)raw_m * (1000000000 + ppb) + 500000000) / 1000000000);
}

/* Re-express @b with a new shift (the sub-ns fraction is dropped). */
static void base_reshift(struct tk_base *b, uint32_t from, uint32_t to)
{
	b->snsec = (b->snsec >> from) << to;
}

/*
 * How far readers extrapolate past an update: the configured bound, cut to
 * a quarter of the counter's wrap (a delta past half the wrap reads as a
 * counter behind cycle_last). Published in cycles per copy (max_cycles)
 * and in ns in the header.
 */
static void tk_set_bound(struct timekeeper *tk, uint64_t freq_hz)
{
	uint64_t cycles = (uint64_t)((unsigned __int128)tk->extrap_max_ns * freq_hz / NSEC_PER_SEC);

	if (cycles > tk->cs->mask >> 2)
		cycles = tk->cs->mask >> 2;
	tk->max_cycles = cycles;
	tk->extrap_ns = (uint64_t)((unsigned __int128)cycles * NSEC_PER_SEC / freq_hz);
	pagefile_set_extrapolate(tk->pf, tk->extrap_ns);
}

/*
 * Counter rate to mult/shift: exact to the last bit for a delta up to twice
 * the extrapolation bound (at least 16 s), so that no reader's 64-bit
 * product overflows; the daemon itself uses 128-bit products, so a stalled
 * daemon cannot overflow. The bases are re-expressed in the new shift.
 */
static int tk_use_source(struct timekeeper *tk, struct clocksource *cs)
{
	uint64_t span = tk->extrap_max_ns * 2 > 16 * NSEC_PER_SEC ? tk->extrap_max_ns * 2 : 16 * NSEC_PER_SEC;
	uint64_t overflow_cycles = (uint64_t)((unsigned __int128)span * cs->freq_hz / NSEC_PER_SEC);
	uint32_t mult, shift;

	if (!calc_mult_shift(cs->freq_hz, overflow_cycles, &mult, &shift)) {
		log_warnx("clocksource %s: no mult/shift for %llu Hz", cs->ops->name,
			  (unsigned long long)cs->freq_hz);
		return -1;
	}
	if (tk->cs) {
		base_reshift(&tk->mono, tk->shift, shift);
		base_reshift(&tk->real, tk->shift, shift);
		base_reshift(&tk->raw, tk->shift, shift);
	}
	tk->cs = cs;
	tk->raw_mult = mult;
	tk->mult = adjusted_mult(mult, tk->adj_ppb);
	tk->shift = shift;
	tk_set_bound(tk, cs->freq_hz);
	tk->still_ns = 0;
	tk->fault = CLOCKD_FAULT_NONE;
	pagefile_set_source(tk->pf, cs->ops->name, cs->vclock_path);
	return 0;
}

int64_t tk_mono_ns(const struct timekeeper *tk)
{
	return base_ns(tk, &tk->mono);
}

int64_t tk_real_offset_ns(const struct timekeeper *tk)
{
	return base_ns(tk, &tk->real) - base_ns(tk, &tk->mono);
}

void tk_real_pair(const struct timekeeper *tk, int64_t *clockd_real_ns, int64_t *system_real_ns)
{
	*clockd_real_ns = base_ns(tk, &tk->real);
	*system_real_ns = tk->kernel_mono_ns + tk->kernel_wall_ns;
}

static uint32_t rate_mult(const struct timekeeper *tk, uint64_t freq_hz)
{
	return (uint32_t)((((unsigned __int128)NSEC_PER_SEC << tk->shift) + freq_hz / 2) / freq_hz);
}

/*
 * Change the counter rate at cycle_last. A reader that read the counter
 * just after our update but still used the old copy computed with the old
 * mult; if the new mult is smaller, the new line would fall below the old
 * one for such a read. Pivoting the new line RATE_PIVOT_NS ahead (adding
 * the difference the old rate gains over that span) keeps every published
 * line at or above the last for counter values up to the pivot.
 */
static void tk_apply_mults(struct timekeeper *tk, uint32_t raw_m, uint32_t m)
{
	uint64_t pivot = (uint64_t)((unsigned __int128)RATE_PIVOT_NS * tk->cs->freq_hz / NSEC_PER_SEC);

	if (m < tk->mult) {
		unsigned __int128 gain = (unsigned __int128)pivot * (tk->mult - m);

		base_add(tk, &tk->mono, gain);
		base_add(tk, &tk->real, gain);
	}
	if (raw_m < tk->raw_mult)
		base_add(tk, &tk->raw, (unsigned __int128)pivot * (tk->raw_mult - raw_m));
	tk->mult = m;
	tk->raw_mult = raw_m;
}

/*
 * A new rate, for the next update: readers extrapolate from the published
 * cycle_last at the published rates for as long as the daemon takes to
 * publish again (a stopped or starved daemon: seconds), so the time up to
 * the next update is accumulated at those rates, and only then does the
 * new one start (tk_apply_mults, pivoting for readers racing that publish).
 * Applied at once now, it would have counted the whole gap at the new rate:
 * 3 s at 0.2 ppm less put CLOCKD_MONOTONIC 650 ns back.
 */
static void tk_set_mults(struct timekeeper *tk, uint32_t raw_m, uint32_t m)
{
	tk->next_raw_mult = raw_m;
	tk->next_mult = m;
	tk->rate_pending = true;
}

static void tk_apply_pending_rate(struct timekeeper *tk)
{
	if (!tk->rate_pending)
		return;
	tk->rate_pending = false;
	tk_apply_mults(tk, tk->next_raw_mult, tk->next_mult);
}

/* A new estimate of the counter's rate (the TSC refinement). */
static void tk_set_rate(struct timekeeper *tk, uint64_t freq_hz)
{
	uint32_t raw_m = rate_mult(tk, freq_hz);

	tk->cs->freq_hz = freq_hz;
	tk_set_mults(tk, raw_m, adjusted_mult(raw_m, tk->adj_ppb));
	tk_set_bound(tk, freq_hz);
}

void tk_set_freq(struct timekeeper *tk, int64_t ppb)
{
	tk->adj_ppb = ppb;
	tk_set_mults(tk, tk->raw_mult, adjusted_mult(tk->raw_mult, ppb));
}

void tk_step_real(struct timekeeper *tk, int64_t ns)
{
	base_step(tk, &tk->real, ns);
}

void tk_set_tracking(struct timekeeper *tk, const struct tk_tracking *tr)
{
	tk->track = *tr;
}

void tk_set_wall_follow(struct timekeeper *tk, enum tk_wall_follow follow)
{
	tk->wall_follow = follow;
}

int64_t tk_real_at_cycles(const struct timekeeper *tk, uint64_t cycles)
{
	uint64_t delta = (cycles - tk->cycle_last) & tk->cs->mask;
	unsigned __int128 sns;

	/* Behind the last update (a counter read before it): no time. */
	if (delta > tk->cs->mask >> 1)
		delta = 0;
	sns = (unsigned __int128)tk->real.snsec + (unsigned __int128)delta * tk->mult;
	return tk->real.sec * (int64_t)NSEC_PER_SEC + (int64_t)(sns >> tk->shift);
}

int64_t tk_real_at(const struct timekeeper *tk, int64_t kernel_mono_ns)
{
	int64_t d = kernel_mono_ns - tk->kernel_mono_ns;

	return base_ns(tk, &tk->real) + (int64_t)((__int128)d * tk->mult / tk->raw_mult);
}

static void tk_publish(struct timekeeper *tk)
{
	struct clockd_page_data d = {
		.vclock_mode = tk->cs->vclock_mode,
		.vclock_clockid = tk->cs->vclock_clockid,
		.cycle_last = tk->cycle_last,
		.mask = tk->cs->mask,
		.max_cycles = tk->max_cycles,
		.mult = tk->mult,
		.shift = tk->shift,
		.mono_sec = tk->mono.sec,
		.mono_snsec = tk->mono.snsec,
		.real_sec = tk->real.sec,
		.real_snsec = tk->real.snsec,
		.raw_sec = tk->raw.sec,
		.raw_snsec = tk->raw.snsec,
		.raw_mult = tk->raw_mult,
		.xtime_sec = tk->real.sec,
		.xtime_nsec = (uint32_t)(tk->real.snsec >> tk->shift),
		.coarse_mono_sec = tk->mono.sec,
		.coarse_mono_nsec = (uint32_t)(tk->mono.snsec >> tk->shift),
		.jiffies_64 = tk->jiffies,
		.kernel_mono_ns = (uint64_t)tk->kernel_mono_ns,
		.offset_ns = tk->track.offset_ns,
		.freq_ppb = tk->track.freq_ppb,
		.error_bound_ns = tk->track.error_bound_ns,
		.rms_offset_ns = tk->track.rms_offset_ns,
		.skew_ppb = tk->track.skew_ppb,
		.ref_mono_ns = tk->track.ref_mono_ns,
		.disc_state = tk->track.state,
	};

	leap_publish(&tk->leap, base_ns(tk, &tk->real), base_ns(tk, &tk->mono), &d.leap, &d.tai_offset);
	pagefile_publish(tk->pf, &d, tk->cs);
}

static void tk_compute_jiffies(struct timekeeper *tk)
{
	int64_t since = tk_mono_ns(tk) - tk->jiffies_epoch_ns;

	tk->jiffies = tk->jiffies_base + tick_index(since > 0 ? (uint64_t)since : 0, tk->hz);
}

/* How much faster than the kernel's, in ppm, the previous daemon's
 * readers may have run while they extrapolated: its page's own rate
 * against its counter's raw rate, or the largest correction this
 * configuration allows, whichever is more, plus 0.1 % for the counter's
 * raw rate against the kernel's. */
static uint64_t restart_margin_ppm(const struct clockd_page_data *p, uint32_t max_rate_ppm)
{
	uint64_t ppm = max_rate_ppm;

	if (p->raw_mult) {
		uint64_t d = p->mult > p->raw_mult ? p->mult - p->raw_mult : 0;
		uint64_t own = (uint64_t)(((unsigned __int128)d * 1000000u + p->raw_mult - 1) / p->raw_mult);

		if (own > ppm)
			ppm = own;
	}
	return ppm + 1000;
}

/* Where the clocks start: fresh from the kernel, or continuing a page. */
static void tk_start_epoch(struct timekeeper *tk, struct pagefile *pf, const struct tk_params *tp)
{
	uint64_t wrap_after_s = tp->jiffies_wrap_after;
	const struct clockd_page *old = &pf->prev_header;
	int64_t kmono = tk->kernel_mono_ns;
	int64_t mono = kmono;
	uint64_t generation = 1, initial = initial_jiffies_for(tk->hz, wrap_after_s);

	/* The kernel's realtime at the counter read. */
	base_set_ns(tk, &tk->real, tk->kernel_mono_ns + tk->kernel_wall_ns);
	base_set_ns(tk, &tk->raw, tk->kernel_raw_ns);
	tk->jiffies_base = initial;
	if (pf->reused) {
		const struct clockd_page_data *p = &pf->prev;
		int64_t old_mono = p->mono_sec * (int64_t)NSEC_PER_SEC + (int64_t)(p->mono_snsec >> p->shift);
		int64_t old_raw = p->raw_sec * (int64_t)NSEC_PER_SEC + (int64_t)(p->raw_snsec >> p->shift);
		int64_t gap = kmono - (int64_t)p->kernel_mono_ns;

		/* Readers extrapolate from the last update for at most
		 * extrapolate_ns (then they report ESTALE), at the page's
		 * rate: a disciplined one up to discipline_max_ppm faster than
		 * the kernel's. That much margin (restart_margin_ppm) keeps
		 * every value they saw behind the new start. */
		int64_t bound = (int64_t)(old->extrapolate_ns ? old->extrapolate_ns : old->stale_ns);
		uint64_t ppm = restart_margin_ppm(p, tp->max_rate_ppm);

		if (!pf->same_boot || gap < 0)
			gap = bound;
		gap += (int64_t)(((unsigned __int128)(uint64_t)(gap < bound ? gap : bound) * ppm + 999999) /
				 1000000) + 1000;
		mono = old_mono + gap;
		base_set_ns(tk, &tk->raw, old_raw + gap);
		generation = old->generation + 1;
		initial = old->initial_jiffies;
		if (old->hz == tk->hz && pf->same_boot) {
			tk->jiffies_base = old->jiffies_base;
			tk->jiffies_epoch_ns = old->jiffies_epoch_ns;
		} else {
			tk->jiffies_base = p->jiffies_64 + 1;
			tk->jiffies_epoch_ns = mono;
		}
		log_info("continuing page generation %llu: monotonic +%lld ns after the last update, jiffies %llu",
			 (unsigned long long)old->generation, (long long)gap,
			 (unsigned long long)p->jiffies_64);
	} else {
		tk->jiffies_epoch_ns = mono;
	}
	base_set_ns(tk, &tk->mono, mono);
	pagefile_set_epoch(pf, generation, initial);
}

int tk_init(struct timekeeper *tk, struct pagefile *pf, struct clocksource *cs, const struct tk_params *p,
	    const char *tick_name, bool counted)
{
	memset(tk, 0, sizeof(*tk));
	tk->pf = pf;
	tk->hz = p->hz;
	tk->counted = counted;
	tk->stale_ns = (uint64_t)p->stale_after_ms * 1000000;
	if (tk->stale_ns < 3ull * tick_period_ns_ceil(tk->hz))
		tk->stale_ns = 3ull * tick_period_ns_ceil(tk->hz);
	tk->extrap_max_ns = (uint64_t)p->extrapolate_max_s * NSEC_PER_SEC;
	if (tk->extrap_max_ns < tk->stale_ns)
		tk->extrap_max_ns = tk->stale_ns;
	tk->stall_limit_ns = (int64_t)p->stall_ticks * (int64_t)tick_period_ns_ceil(tk->hz);
	tk->recover_ns = (int64_t)p->source_recover_s * (int64_t)NSEC_PER_SEC;
	if (tk_use_source(tk, cs) < 0)
		return -1;

	/* Sample the counter and the kernel's clocks as close together as
	 * we can (the first calls fault in the vDSO data). */
	for (int i = 0; i < 2; i++) {
		tk->cycle_last = cs->ops->read(cs);
		tk->kernel_mono_ns = kclock_ns(CLOCK_MONOTONIC);
		tk->kernel_raw_ns = kclock_ns(CLOCK_MONOTONIC_RAW);
	}
	/* No tight bracket (a preempted start): an unbracketed sample, the
	 * next good one corrects it. */
	if (!kernel_wall_sample(&tk->kernel_wall_ns))
		tk->kernel_wall_ns = kclock_ns(CLOCK_REALTIME) - kclock_ns(CLOCK_MONOTONIC);
	tk_start_epoch(tk, pf, p);
	tk_compute_jiffies(tk);
	/* A previous daemon whose jiffies counted a device may have run ahead
	 * of time: jiffies never go back. */
	if (pf->reused && tk->jiffies <= pf->prev.jiffies_64) {
		tk->jiffies_base = pf->prev.jiffies_64 + 1;
		tk->jiffies_epoch_ns = tk_mono_ns(tk);
		tk->jiffies = tk->jiffies_base;
	}

	pagefile_set_rate(pf, tk->hz, tick_period_ns_ceil(tk->hz), tk->stale_ns);
	pagefile_set_start(pf, tk_mono_ns(tk));
	pagefile_set_jiffies_epoch(pf, tk->jiffies_base, tk->jiffies_epoch_ns);
	pagefile_set_tick(pf, tick_name);
	leap_poll(&tk->leap, tk->kernel_mono_ns, base_ns(tk, &tk->real));
	tk_publish(tk);
	return 0;
}

/* The counter, between two reads of the kernel's CLOCK_MONOTONIC
 * (*before, *after): read again, up to READ_TRIES times, while they are
 * more than READ_SLACK_NS apart. */
static uint64_t read_bracketed(const struct timekeeper *tk, int64_t *before, int64_t *after)
{
	uint64_t now = 0;

	for (int i = 0; i < READ_TRIES; i++) {
		*before = kclock_ns(CLOCK_MONOTONIC);
		now = tk->cs->ops->read(tk->cs);
		*after = kclock_ns(CLOCK_MONOTONIC);
		if (*after - *before <= READ_SLACK_NS)
			break;
	}
	return now;
}

/*
 * The counter against the kernel's clock (see devices.h): it moved @delta
 * cycles in @elapsed ns, read within @slack ns of the kernel's clock (the
 * read before within @prev_slack), after *@still_ns of no progress (kept
 * up to date). CLOCKD_FAULT_NONE if it may be used; else the fault, what
 * was seen in @why, and for a jump *@ahead_ns, how far a client reading
 * the counter itself may have seen (up to the stale limit).
 */
static uint32_t check_counter(const struct timekeeper *tk, uint64_t delta, int64_t elapsed, int64_t slack,
			      int64_t prev_slack, int64_t *still_ns, char *why, size_t whylen, int64_t *ahead_ns)
{
	int64_t delta_ns, diff, room;

	if (tk->cs->gone) {
		snprintf(why, whylen, "the device disappeared");
		return CLOCKD_FAULT_GONE;
	}
	if (tk->cs->mask == UINT64_MAX && (int64_t)delta < 0) {
		snprintf(why, whylen, "the counter went back %llu cycles", (unsigned long long)-delta);
		return CLOCKD_FAULT_BACKWARDS;
	}
	if (delta == 0) {
		*still_ns += elapsed;
		if (*still_ns < tk->stall_limit_ns)
			return CLOCKD_FAULT_NONE;
		snprintf(why, whylen, "no counter progress for %lld ms (stall_ticks)", (long long)(*still_ns / 1000000));
		return CLOCKD_FAULT_STALLED;
	}
	*still_ns = 0;
	delta_ns = (int64_t)(((unsigned __int128)delta * tk->mult) >> tk->shift);
	diff = delta_ns - elapsed;
	/* Each read of the counter was somewhere in its slack before its
	 * kernel time. */
	room = elapsed / 16 + STEP_FAULT_NS + slack + prev_slack;
	if (-diff > room) {
		/* Far behind the kernel's clock: it stopped for a while. */
		snprintf(why, whylen, "the counter moved %lld ns in %lld ns of kernel time", (long long)delta_ns,
			 (long long)elapsed);
		return CLOCKD_FAULT_STALLED;
	}
	if (diff > room) {
		snprintf(why, whylen, "the counter moved %lld ns in %lld ns of kernel time", (long long)delta_ns,
			 (long long)elapsed);
		if (tk->cs->vclock_mode != CLOCKD_VCLOCK_NONE)
			*ahead_ns = delta_ns > (int64_t)tk->extrap_ns ? (int64_t)tk->extrap_ns : delta_ns;
		return CLOCKD_FAULT_STEPPED;
	}
	return CLOCKD_FAULT_NONE;
}

bool tk_update(struct timekeeper *tk, int64_t ticks)
{
	struct clocksource *cs = tk->cs;
	int64_t before, kmono;
	uint64_t now, delta, freq;

	/* The ticks count even when the time cannot be kept: jiffies_64
	 * counts the tick device's ticks, and is published again with the
	 * next update (another source's, or this one's back from probation). */
	if (tk->fault != CLOCKD_FAULT_NONE)
		goto unusable; /* a faulted source with no other to go to */
	now = read_bracketed(tk, &before, &kmono);
	delta = (now - tk->cycle_last) & cs->mask;
	tk->fault = check_counter(tk, delta, kmono - tk->kernel_mono_ns, kmono - before, tk->read_slack_ns,
				  &tk->still_ns, tk->fault_why, sizeof(tk->fault_why), &tk->fault_ahead_ns);
	if (tk->fault != CLOCKD_FAULT_NONE) {
		tk->probe_mono_ns = 0;
		goto unusable;
	}
	tk->read_slack_ns = kmono - before;
	tk->kernel_mono_ns = kmono;
	base_add(tk, &tk->mono, (unsigned __int128)delta * tk->mult);
	base_add(tk, &tk->real, (unsigned __int128)delta * tk->mult);
	base_add(tk, &tk->raw, (unsigned __int128)delta * tk->raw_mult);
	tk->cycle_last = now;
	tk_follow_wall(tk);
	leap_poll(&tk->leap, kmono, base_ns(tk, &tk->real));
	if (cs->ops->refine && cs->ops->refine(cs, now, &freq))
		tk_set_rate(tk, freq);
	tk_apply_pending_rate(tk);
	if (tk->counted)
		tk->jiffies += (uint64_t)ticks;
	else
		tk_compute_jiffies(tk);
	tk_publish(tk);
	__atomic_store_n(&tk->updates, tk->updates + 1, __ATOMIC_RELAXED);
	return true;
unusable:
	if (tk->counted)
		tk->jiffies += (uint64_t)ticks;
	return false;
}

bool tk_probe_source(struct timekeeper *tk)
{
	char why[sizeof(tk->fault_why)];
	int64_t before, kmono, ahead = 0;
	uint64_t now;
	uint32_t fault;

	if (tk->recover_ns == 0 || tk->fault == CLOCKD_FAULT_NONE || tk->fault == CLOCKD_FAULT_GONE)
		return false;
	now = read_bracketed(tk, &before, &kmono);
	if (tk->probe_mono_ns == 0) {
		fault = CLOCKD_FAULT_NONE;
		tk->probe_good_ns = 0;
		tk->probe_still_ns = 0;
	} else {
		fault = check_counter(tk, (now - tk->probe_cycle) & tk->cs->mask, kmono - tk->probe_mono_ns,
				      kmono - before, tk->probe_slack_ns, &tk->probe_still_ns, why, sizeof(why), &ahead);
		/* Time in which it moved, and as the kernel's clock did. */
		if (fault == CLOCKD_FAULT_NONE && tk->probe_still_ns == 0)
			tk->probe_good_ns += kmono - tk->probe_mono_ns;
		else if (fault != CLOCKD_FAULT_NONE)
			tk->probe_good_ns = 0;
	}
	tk->probe_cycle = now;
	tk->probe_mono_ns = kmono;
	tk->probe_slack_ns = kmono - before;
	return tk->probe_good_ns >= tk->recover_ns;
}

int tk_switch_source(struct timekeeper *tk, struct clocksource *cs)
{
	int64_t kmono = kclock_ns(CLOCK_MONOTONIC);
	int64_t adv = kmono - tk->kernel_mono_ns;
	uint64_t old_shift = tk->shift;

	if (adv < tk->fault_ahead_ns)
		adv = tk->fault_ahead_ns;
	if (adv < 0)
		adv = 0;
	base_add(tk, &tk->mono, (unsigned __int128)adv << old_shift);
	base_add(tk, &tk->real, (unsigned __int128)adv << old_shift);
	base_add(tk, &tk->raw, (unsigned __int128)adv << old_shift);
	tk->fault_ahead_ns = 0;
	if (tk_use_source(tk, cs) < 0)
		return -1;
	tk->cycle_last = cs->ops->read(cs);
	tk->kernel_mono_ns = kclock_ns(CLOCK_MONOTONIC);
	if (!tk->counted)
		tk_compute_jiffies(tk);
	tk_publish(tk);
	__atomic_store_n(&tk->updates, tk->updates + 1, __ATOMIC_RELAXED);
	return 0;
}

void tk_set_tick(struct timekeeper *tk, const char *tick_name, bool counted)
{
	if (!counted) {
		/* Time-driven jiffies from here: tick 0 is now. */
		tk->jiffies_base = tk->jiffies;
		tk->jiffies_epoch_ns = tk_mono_ns(tk);
		pagefile_set_jiffies_epoch(tk->pf, tk->jiffies_base, tk->jiffies_epoch_ns);
	}
	tk->counted = counted;
	pagefile_set_tick(tk->pf, tick_name);
}

int64_t tk_next_tick_deadline(const struct timekeeper *tk)
{
	uint64_t k = tk->jiffies - tk->jiffies_base + 1;
	int64_t target = tk->jiffies_epoch_ns + (int64_t)tick_offset_ns(k, tk->hz);

	/* clockd and kernel monotonic run at nearly the same rate; a wake-up
	 * a hair early just publishes the same tick and re-arms. */
	return tk->kernel_mono_ns + (target - tk_mono_ns(tk));
}

/* ns since the epoch of @c at @cycles, in 128 bits: no stale limit (the
 * daemon lives), a counter read behind cycle_last is no time passed. */
static int64_t conv_ns(const struct page_conv *c, uint64_t cycles)
{
	uint64_t delta = (cycles - c->cycle_last) & c->mask;
	unsigned __int128 snsec;

	if (delta > (c->mask >> 1))
		delta = 0;
	snsec = ((unsigned __int128)c->snsec + (unsigned __int128)delta * c->mult) >> (c->shift & 63);
	return c->sec * (int64_t)NSEC_PER_SEC + (int64_t)snsec;
}

int tk_clock_ns(const struct timekeeper *tk, bool realtime, uint64_t *ns)
{
	const struct pagefile *pf = tk->pf;
	const struct clockd_page_data *d;
	const struct clocksource *cs;
	const void *tag;
	struct page_conv conv;
	uint64_t cycles = 0, kmono;
	uint32_t seq;
	bool counted;
	int64_t t;

	do {
		d = pagefile_read_begin(pf, &seq, &tag);
		cs = tag;
		counted = cs && cs->vclock_mode != CLOCKD_VCLOCK_NONE && cs->ops->read_shared &&
			  cs->ops->read_shared(cs, &cycles);
		page_conv_load(&conv, d, realtime ? PAGE_REAL : PAGE_MONO);
		kmono = LOAD_RELAXED(&d->kernel_mono_ns);
	} while (pagefile_read_retry(pf, seq));
	if (!cs)
		return -EAGAIN;
	if (pagefile_alarm(pf) & CLOCKD_ALARM_SOURCE) {
		/* The counter is not to be trusted: the last update, plus the
		 * kernel's time since (as tk_switch_source continues). */
		int64_t since = kclock_ns(CLOCK_MONOTONIC) - (int64_t)kmono;

		t = conv_ns(&conv, conv.cycle_last) + (since > 0 ? since : 0);
	} else {
		t = conv_ns(&conv, counted ? cycles : conv.cycle_last);
	}
	*ns = t < 0 ? 0 : (uint64_t)t;
	return 0;
}

uint64_t tk_clock_jiffies(const struct timekeeper *tk)
{
	const void *tag;
	uint64_t j;
	uint32_t seq;

	do
		j = LOAD_RELAXED(&pagefile_read_begin(tk->pf, &seq, &tag)->jiffies_64);
	while (pagefile_read_retry(tk->pf, seq));
	return j;
}
