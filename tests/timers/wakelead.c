/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The raised lead of a self-waking client (src/clockd/timers/wakelead.h):
 * the estimate of the 99th percentile of a base's round lateness rises to
 * a steady lateness in about as many wake-ups as microseconds, settles
 * where 1 % of a lateness distribution lies above it, moves one step for
 * an outlier of seconds, stays within the longest lead and falls back when
 * the machine quiets; the lead is the configured one raised to the
 * estimate plus the margin, within the longest lead, and 0 stays 0.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include "clockd/timers/wakelead.h"
#include "tests/tap.h"
#include "tests/util.h"

static uint64_t rng = 1;

/* Uniform in (0, 1). */
static double uniform(void)
{
	return ((double)(tu_rng(&rng) >> 11) + 0.5) / 9007199254740992.0;
}

/* 20 us plus an exponential tail of mean 10 us: quantile p is at
 * 20 - 10 ln(1 - p) us (p99 66.1 us). */
#define BASE_NS 20000.0
#define MEAN_NS 10000.0
static uint64_t lateness(void)
{
	return (uint64_t)(BASE_NS - MEAN_NS * log(uniform()));
}

static double quantile(double p)
{
	return BASE_NS - MEAN_NS * log(1 - p);
}

int main(void)
{
	uint64_t est = 0, above = 0, n;

	tap_plan(8);

	for (n = 0; n < 70; n++)
		est = wake_p99_update(est, 60000);
	tap_ok(est >= 59000 && est <= 61000, "a steady 60 us lateness: %llu ns after 70 wake-ups",
	       (unsigned long long)est);

	est = 0;
	for (n = 0; n < 200000; n++)
		est = wake_p99_update(est, lateness());
	for (n = 0; n < 100000; n++) {
		uint64_t l = lateness();

		above += l > est;
		est = wake_p99_update(est, l);
	}
	tap_ok(above >= 500 && above <= 2000, "%llu of 100000 lateness samples above the estimate (want 0.5-2 %%)",
	       (unsigned long long)above);
	tap_ok((double)est >= quantile(0.98) && (double)est <= quantile(0.995),
	       "the estimate %llu ns lies between the 98th (%.0f) and 99.5th (%.0f) percentiles", (unsigned long long)est,
	       quantile(0.98), quantile(0.995));

	est = 50000;
	est = wake_p99_update(est, 5000000000ull);
	tap_ok(est > 50000 && est <= 50000 + WAKE_P99_STEP_NS, "a 5 s outlier moves 50 us to %llu ns",
	       (unsigned long long)est);

	for (n = 0; n < 100000; n++)
		est = wake_p99_update(est, 10000000000ull);
	tap_ok(est == WAKE_LEAD_MAX_NS, "a run of 10 s lateness stops at the longest lead: %llu ns",
	       (unsigned long long)est);
	for (n = 0; n < 100000; n++)
		est = wake_p99_update(est, 5000);
	tap_ok(est >= 5000 && est < 6000, "then 5 us wake-ups bring it back: %llu ns after 100000",
	       (unsigned long long)est);

	tap_ok(wake_lead(0, 50000) == 0 && wake_lead(30000, 0) == 30000,
	       "lead 0 stays 0; with nothing measured the configured lead: %llu, %llu",
	       (unsigned long long)wake_lead(0, 50000), (unsigned long long)wake_lead(30000, 0));
	tap_ok(wake_lead(30000, 50000) == 50000 + WAKE_LEAD_MARGIN_NS && wake_lead(200000, 50000) == 200000 &&
		       wake_lead(30000, 990000) == WAKE_LEAD_MAX_NS,
	       "raised to the estimate plus the margin (%llu), never lowered (%llu), at most the longest (%llu)",
	       (unsigned long long)wake_lead(30000, 50000), (unsigned long long)wake_lead(200000, 50000),
	       (unsigned long long)wake_lead(30000, 990000));
	return tap_done();
}
