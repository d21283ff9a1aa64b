/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sim: a simulated timer device, deterministic and scriptable, for tests
 * (the fault handling, the discipline, programs on a clock that is not the
 * kernel's). Both a clocksource (a ns counter running sim_rate_ppm off the
 * kernel's CLOCK_MONOTONIC_RAW) and a self-paced tick device (pulses at hz,
 * off by the same rate, each moved by a jitter drawn from sim_seed), to
 * which sim_script applies faults at set times: stalls, steps, spurious and
 * missed pulses, late pulses, rate changes, disappearance
 * (shared/simscript.h).
 *
 * Clients cannot read the simulated counter (CLOCKD_VCLOCK_NONE): they get
 * the daemon's time at the last tick.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <clockd/page.h>
#include "clockd/sources/clocksource.h"
#include "clockd/ticks/tick.h"
#include "shared/log.h"
#include "shared/simscript.h"
#include "shared/tickmath.h"

#define PPM 1000000
#define SIM_COUNTER_START (1ull << 40) /* room for backward steps */

struct sim_script {
	struct sim_event ev[SIM_MAX_EVENTS];
	int nev, next;
};

/* Parse the script; a device "absent at start" (vanish at 0) fails. */
static int script_load(struct sim_script *sc, const char *role, const struct sim_params *p)
{
	char why[160];

	sc->next = 0;
	sc->nev = simscript_parse(p->script, sc->ev, why, sizeof(why));
	if (sc->nev < 0) {
		log_warnx("%s sim: sim_script: %s", role, why);
		return -1;
	}
	for (int i = 0; i < sc->nev && sc->ev[i].at_ns == 0; i++) {
		if (sc->ev[i].action == SIM_VANISH) {
			log_warnx("%s sim: no such device (sim_script: vanish at 0s)", role);
			return -1;
		}
	}
	return 0;
}

/* The next event due at or before @t (ns since start), or NULL. */
static const struct sim_event *script_due(struct sim_script *sc, int64_t t)
{
	if (sc->next < sc->nev && sc->ev[sc->next].at_ns <= t)
		return &sc->ev[sc->next++];
	return NULL;
}

/* -------------------------------------------------------------------- */
/* The clocksource */

struct sim_src {
	struct sim_script sc;
	int64_t raw0;         /* kernel CLOCK_MONOTONIC_RAW at start */
	int64_t t;            /* ns since start, up to which the counter is run */
	int64_t ppm;
	int64_t stall_until;  /* ns since start */
	uint64_t counter;
	uint64_t frac;        /* counter remainder, 1e-6 ns */
	bool gone;
};

/* Run the counter from s->t to @t. */
static void src_run(struct sim_src *s, int64_t t)
{
	int64_t from = s->t > s->stall_until ? s->t : s->stall_until;
	unsigned __int128 add;

	if (t > from) {
		add = (unsigned __int128)(t - from) * (uint64_t)(PPM + s->ppm) + s->frac;
		s->counter += (uint64_t)(add / PPM);
		s->frac = (uint64_t)(add % PPM);
	}
	if (t > s->t)
		s->t = t;
}

static void src_apply(struct sim_src *s, const struct sim_event *e)
{
	switch (e->action) {
	case SIM_STALL:
		s->stall_until = e->arg == INT64_MAX ? INT64_MAX : e->at_ns + e->arg;
		break;
	case SIM_STEP:
		s->counter += (uint64_t)e->arg;
		break;
	case SIM_RATE:
		s->ppm = e->arg;
		break;
	case SIM_VANISH:
		s->gone = true;
		break;
	case SIM_SPURIOUS:
	case SIM_MISS:
	case SIM_LATE:
		break; /* pulses: the tick device's business */
	}
}

static int sim_src_init(struct clocksource *cs, const struct source_params *p)
{
	struct sim_src *s = calloc(1, sizeof(*s));

	if (!s) {
		log_warn("source sim");
		return -1;
	}
	if (script_load(&s->sc, "source", &p->sim) < 0) {
		free(s);
		return -1;
	}
	s->ppm = p->sim.rate_ppm;
	s->raw0 = kclock_ns(CLOCK_MONOTONIC_RAW);
	s->counter = SIM_COUNTER_START;
	cs->freq_hz = NSEC_PER_SEC;
	cs->mask = UINT64_MAX;
	cs->vclock_mode = CLOCKD_VCLOCK_NONE;
	snprintf(cs->device, sizeof(cs->device), "simulated, %+lld ppm", (long long)s->ppm);
	cs->priv = s;
	return 0;
}

static uint64_t sim_src_read(struct clocksource *cs)
{
	struct sim_src *s = cs->priv;
	int64_t t = kclock_ns(CLOCK_MONOTONIC_RAW) - s->raw0;
	const struct sim_event *e;

	while ((e = script_due(&s->sc, t))) {
		src_run(s, e->at_ns);
		src_apply(s, e);
	}
	src_run(s, t);
	if (s->gone)
		cs->gone = true;
	return s->counter;
}

static void sim_src_fini(struct clocksource *cs)
{
	free(cs->priv);
	cs->priv = NULL;
}

const struct clocksource_ops clocksource_sim = {
	.name = "sim",
	.descr = "a simulated counter with a set rate error and scripted faults (tests)",
	.init = sim_src_init,
	.read = sim_src_read,
	.fini = sim_src_fini,
};

/* -------------------------------------------------------------------- */
/* The tick device */

struct sim_tick {
	struct sim_script sc;
	int64_t t0;          /* kernel CLOCK_MONOTONIC at start */
	int64_t period;      /* nominal, ns */
	int64_t ppm;
	int64_t base_ns;     /* nominal time of pulse base_k, ns since start */
	int64_t base_k;
	int64_t k;           /* the next regular pulse */
	int64_t stall_until; /* ns since start */
	int64_t miss;        /* regular pulses still to drop */
	int64_t spurious;    /* extra pulses to send after the next regular one */
	int64_t spurious_at; /* the next extra pulse (0: none under way) */
	int64_t late;        /* the next regular pulse comes this much late */
	uint64_t jitter, seed;
	bool gone;
};

/* splitmix64: a pulse's jitter is a function of the seed and its number,
 * so a run can be repeated exactly. */
static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* Nominal time of regular pulse k, ns since start. */
static int64_t pulse_nominal(const struct sim_tick *s, int64_t k)
{
	return s->base_ns + (int64_t)((__int128)(k - s->base_k) * s->period * PPM / (PPM + s->ppm));
}

/* The first regular pulse whose nominal time is at or after @t. */
static int64_t pulse_at_or_after(const struct sim_tick *s, int64_t t)
{
	__int128 num = (__int128)(t - s->base_ns) * (PPM + s->ppm);
	__int128 den = (__int128)s->period * PPM;

	if (num <= 0)
		return s->base_k;
	return s->base_k + (int64_t)((num + den - 1) / den);
}

static int64_t pulse_time(const struct sim_tick *s, int64_t k)
{
	int64_t j = 0;

	if (s->jitter)
		j = (int64_t)(mix(s->seed ^ ((uint64_t)k * 0x2545f4914f6cdd1dull)) % (2 * s->jitter + 1)) -
		    (int64_t)s->jitter;
	return pulse_nominal(s, k) + j;
}

/*
 * The simulation's truth, for tests: from kernel CLOCK_MONOTONIC @from_ns
 * on, until the next such line, true time is whole second (pulse) base_k
 * at the nominal time of that pulse and runs at one second a nominal
 * period. Logged at the start and whenever a rate change or a step
 * redefines the pulse train (clockd.conf(5), sim_script).
 */
static void truth_log(const struct sim_tick *s, int64_t from_ns)
{
	log_info("tick sim: truth from kernel CLOCK_MONOTONIC %lld ns: pulse %lld at %lld ns, period %.6f ns",
		 (long long)from_ns, (long long)s->base_k, (long long)(s->t0 + s->base_ns),
		 (double)s->period * PPM / (double)(PPM + s->ppm));
}

static void tick_apply(struct sim_tick *s, const struct sim_event *e)
{
	switch (e->action) {
	case SIM_STALL:
		s->stall_until = e->arg == INT64_MAX ? INT64_MAX : e->at_ns + e->arg;
		break;
	case SIM_RATE:
		/* Pulses from the next one on come at the new rate. */
		s->base_ns = pulse_nominal(s, s->k);
		s->base_k = s->k;
		s->ppm = e->arg;
		truth_log(s, s->t0 + s->base_ns);
		break;
	case SIM_MISS:
		s->miss += e->arg;
		break;
	case SIM_SPURIOUS:
		s->spurious += e->arg;
		break;
	case SIM_VANISH:
		s->gone = true;
		break;
	case SIM_LATE:
		s->late = e->arg;
		break;
	case SIM_STEP:
		/* The device's time jumps by arg: its pulses from the next
		 * one on come that much earlier (+) or later (-). */
		s->base_ns = pulse_nominal(s, s->k) - e->arg;
		s->base_k = s->k;
		/* From the step, or from the next pulse if a forward step
		 * brings it before the step's time. */
		truth_log(s, s->t0 + (pulse_time(s, s->k) + s->late < e->at_ns ? pulse_time(s, s->k) + s->late
									       : e->at_ns));
		break;
	}
}

#define SIM_NEVER INT64_MAX

/*
 * The next pulse, ns since start: an extra one under way, else the next
 * regular pulse that is neither stalled nor dropped, SIM_NEVER in a stall
 * for ever. Applies the events due by then; a vanish returns its own time
 * with *vanish set.
 */
static int64_t tick_next(struct sim_tick *s, bool *extra, bool *vanish)
{
	*extra = *vanish = false;
	for (;;) {
		int64_t t = s->spurious_at ? s->spurious_at : pulse_time(s, s->k) + s->late;
		const struct sim_event *e = script_due(&s->sc, t);

		if (e) {
			tick_apply(s, e);
			if (s->gone) {
				*vanish = true;
				return e->at_ns;
			}
			continue;
		}
		if (s->spurious_at) {
			*extra = true;
			return t;
		}
		if (t < s->stall_until) {
			int64_t until = s->stall_until;

			/* On to the first pulse after the stall, or the next
			 * event, whichever is first. */
			if (s->sc.next < s->sc.nev && s->sc.ev[s->sc.next].at_ns < until)
				until = s->sc.ev[s->sc.next].at_ns;
			if (until == SIM_NEVER)
				return SIM_NEVER;
			s->k = pulse_at_or_after(s, until) > s->k ? pulse_at_or_after(s, until) : s->k + 1;
			continue;
		}
		if (s->miss > 0) {
			s->miss--;
			s->k++;
			continue;
		}
		return t;
	}
}

static int sim_tick_init(struct tick_device *td, const struct tick_params *p)
{
	struct sim_tick *s = calloc(1, sizeof(*s));

	if (!s) {
		log_warn("tick sim");
		return -1;
	}
	if (script_load(&s->sc, "tick", &p->sim) < 0) {
		free(s);
		return -1;
	}
	s->period = (int64_t)(NSEC_PER_SEC / p->hz);
	s->ppm = p->sim.rate_ppm;
	s->jitter = p->sim.jitter_ns;
	s->seed = p->sim.seed;
	s->t0 = kclock_ns(CLOCK_MONOTONIC);
	/* The first pulse at the first multiple of the period of the kernel's
	 * CLOCK_REALTIME after start (at 1 Hz: a PPS on the system's seconds),
	 * at least half a period ahead. */
	{
		int64_t real = kclock_ns(CLOCK_REALTIME), mono = kclock_ns(CLOCK_MONOTONIC);
		int64_t next = (real / s->period + 1) * s->period;

		if (next - real < s->period / 2)
			next += s->period;
		s->base_ns = next - real + (mono - s->t0);
	}
	truth_log(s, s->t0);
	td->self_paced = true;
	snprintf(td->device, sizeof(td->device), "simulated, %+lld ppm, jitter %llu ns", (long long)s->ppm,
		 (unsigned long long)s->jitter);
	td->priv = s;
	return 0;
}

static int64_t sim_tick_wait(struct tick_device *td, int64_t deadline_ns)
{
	struct sim_tick *s = td->priv;
	int64_t start = kclock_ns(CLOCK_MONOTONIC), t, at;
	bool extra, vanish;
	struct timespec ts;
	int r;

	(void)deadline_ns;
	if (s->gone)
		return TICK_GONE;
	t = tick_next(s, &extra, &vanish);
	at = t == SIM_NEVER ? SIM_NEVER : s->t0 + t;
	if (at > start + td->stall_ns) {
		ts = ns_to_ts(start + td->stall_ns);
		r = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
		return r == EINTR ? 0 : TICK_STALLED;
	}
	ts = ns_to_ts(at);
	if (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		return 0; /* the same pulse comes at the next call */
	if (vanish)
		return TICK_GONE;
	if (extra) {
		s->spurious_at = --s->spurious > 0 ? t + s->period / 10 : 0;
	} else {
		s->k++;
		s->late = 0;
		if (s->spurious > 0)
			s->spurious_at = t + s->period / 10;
	}
	td->stamp_ns = at;
	if (s->k == 1 && !extra)
		log_info("tick sim: pulse 0 at kernel CLOCK_MONOTONIC %lld ns, period %.3f ns (nominal: "
			 "the simulation's truth)", (long long)(s->t0 + pulse_nominal(s, 0)),
			 (double)s->period * PPM / (PPM + s->ppm));
	return 1;
}

static void sim_tick_fini(struct tick_device *td)
{
	free(td->priv);
	td->priv = NULL;
}

const struct tick_ops tick_sim = {
	.name = "sim",
	.descr = "simulated pulses at hz with a set rate error, jitter and scripted faults (tests)",
	.init = sim_tick_init,
	.wait = sim_tick_wait,
	.fini = sim_tick_fini,
};
