/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tsc: the x86 invariant time stamp counter. Its rate is measured against
 * the kernel's CLOCK_MONOTONIC_RAW: roughly at start (tsc_calibrate_ms),
 * then again over spans that double from 1 s to 1024 s, so the estimate's
 * error shrinks as the span grows (the reading jitter, ~100 ns, over 1024 s
 * is 1e-10).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <clockd/page.h>
#include "clockd/sources/clocksource.h"
#include "shared/log.h"
#include "shared/tickmath.h"
#include "shared/tsc.h"

#define REFINE_FIRST_NS 1000000000ll
#define REFINE_LAST_NS 1024000000000ll

struct tsc_state {
	uint64_t tsc0;       /* calibration start */
	int64_t raw0;        /* CLOCK_MONOTONIC_RAW at tsc0, ns */
	int64_t next_ns;     /* span of the next refinement */
	uint64_t next_cycles;
};

/* A (tsc, raw ns) pair with the tightest bracket of a few tries. */
static void tsc_sample(uint64_t *tsc, int64_t *raw)
{
	int64_t best = INT64_MAX;

	for (int i = 0; i < 16; i++) {
		int64_t r0 = kclock_ns(CLOCK_MONOTONIC_RAW);
		uint64_t t = rdtsc_ordered();
		int64_t r1 = kclock_ns(CLOCK_MONOTONIC_RAW);

		if (r1 - r0 < best) {
			best = r1 - r0;
			*tsc = t;
			*raw = r0 + (r1 - r0) / 2;
		}
	}
}

static uint64_t tsc_rate(uint64_t t0, int64_t r0, uint64_t t1, int64_t r1)
{
	return (uint64_t)(((unsigned __int128)(t1 - t0) * NSEC_PER_SEC + (uint64_t)(r1 - r0) / 2) /
			  (uint64_t)(r1 - r0));
}

static int tsc_init(struct clocksource *cs, const struct source_params *p)
{
	struct tsc_state *st;
	struct timespec nap;
	uint64_t t1;
	int64_t r1;

	if (!CLOCKD_HAVE_TSC || !tsc_is_invariant()) {
		log_info("tsc: no invariant TSC on this CPU");
		return -1;
	}
	st = calloc(1, sizeof(*st));
	if (!st) {
		log_warn("tsc");
		return -1;
	}
	tsc_sample(&st->tsc0, &st->raw0);
	nap = ns_to_ts((int64_t)p->tsc_calibrate_ms * 1000000);
	while (clock_nanosleep(CLOCK_MONOTONIC, 0, &nap, &nap) == EINTR)
		;
	tsc_sample(&t1, &r1);
	cs->freq_hz = tsc_rate(st->tsc0, st->raw0, t1, r1);
	if (cs->freq_hz < 1000000) {
		log_warnx("tsc: implausible rate %llu Hz", (unsigned long long)cs->freq_hz);
		free(st);
		return -1;
	}
	st->next_ns = REFINE_FIRST_NS;
	st->next_cycles = st->tsc0 + cs->freq_hz;
	cs->mask = UINT64_MAX;
	cs->vclock_mode = CLOCKD_VCLOCK_TSC;
	snprintf(cs->device, sizeof(cs->device), "invariant TSC");
	cs->priv = st;
	return 0;
}

static uint64_t tsc_read(struct clocksource *cs)
{
	return rdtsc_ordered();
}

static bool tsc_read_shared(const struct clocksource *cs, uint64_t *c)
{
	(void)cs;
	*c = rdtsc_ordered();
	return true;
}

static bool tsc_refine(struct clocksource *cs, uint64_t now, uint64_t *freq_hz)
{
	struct tsc_state *st = cs->priv;
	uint64_t t;
	int64_t r;

	if (st->next_ns == 0 || (int64_t)(now - st->next_cycles) < 0)
		return false;
	tsc_sample(&t, &r);
	*freq_hz = tsc_rate(st->tsc0, st->raw0, t, r);
	log_debug("tsc: rate over %.0f s: %llu Hz", (double)(r - st->raw0) / 1e9,
		  (unsigned long long)*freq_hz);
	st->next_ns = st->next_ns >= REFINE_LAST_NS ? 0 : st->next_ns * 2;
	st->next_cycles = st->tsc0 + (uint64_t)((unsigned __int128)st->next_ns * *freq_hz / NSEC_PER_SEC);
	return *freq_hz != cs->freq_hz;
}

static void tsc_fini(struct clocksource *cs)
{
	free(cs->priv);
	cs->priv = NULL;
}

const struct clocksource_ops clocksource_tsc = {
	.name = "tsc",
	.descr = "x86 invariant TSC, read by clients with lfence;rdtsc",
	.init = tsc_init,
	.read = tsc_read,
	.read_shared = tsc_read_shared,
	.refine = tsc_refine,
	.fini = tsc_fini,
};
