/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The lead of a client whose delivery thread wakes by itself (a
 * SCHED_OTHER one, ring_prepare_wait_until): its record must be in the
 * ring when that thread wakes, just before the expiry, or the wake-up
 * finds nothing and the thread waits for the eventfd, late. The timer
 * thread hands the record over the lead early, but its own timer
 * wake-ups come late by what they take on this machine: under 10 us on
 * some, 30 us at the median and 50-65 us at the 99th percentile on
 * others (a KVM guest on AMD EPYC, quiet or beside busy loops), more than
 * the 30 us of timer_lead_other_ns. So each base keeps an estimate of
 * the 99th percentile of how late after its timerfd's deadline a round
 * that timerfd woke ends (the wake-up and the hand-overs), and raises
 * that lead to it, plus WAKE_LEAD_MARGIN_NS: the thread wakes
 * SELF_WAKE_EARLY_NS (2 us) before the expiry, and epoll may end its
 * timeout up to a thousandth sooner (20 us at the longest self-wake).
 * Handing over sooner costs such a client nothing: it sleeps until the
 * expiry whatever the lead.
 *
 * The estimate is a streaming quantile, a deterministic form of the
 * "frugal" estimator (Ma, Muthukrishnan and Sandler, "Frugal streaming
 * for estimating quantiles"): each lateness above it raises it by
 * q x WAKE_P99_STEP_NS, each one below lowers it by (1 - q) x
 * WAKE_P99_STEP_NS, so it settles where 1 % lie above (q = 0.99). A
 * lateness of seconds (a stopped machine) raises it by one step only. It
 * rises about 1 us a wake-up (60 us in some 60 wake-ups) and falls 10 ns
 * one.
 */
#ifndef CLOCKD_TIMERS_WAKELEAD_H
#define CLOCKD_TIMERS_WAKELEAD_H

#include <stdint.h>

#include "shared/timerrec.h"

#define WAKE_P99_STEP_NS 1000u
#define WAKE_P99_UP_NS (WAKE_P99_STEP_NS * 99u / 100u)
#define WAKE_P99_DOWN_NS (WAKE_P99_STEP_NS / 100u)
#define WAKE_LEAD_MARGIN_NS 25000u
/* The longest lead (shared/timerrec.h): timer_lead_other_ns' bound, and
 * the longest wait for an expiry the library allows. */
#define WAKE_LEAD_MAX_NS TIMERREC_LEAD_MAX_NS

/* The estimate @est after a timer wake-up @late_ns late. */
static inline uint64_t wake_p99_update(uint64_t est, uint64_t late_ns)
{
	if (late_ns > est)
		return est + WAKE_P99_UP_NS < WAKE_LEAD_MAX_NS ? est + WAKE_P99_UP_NS : WAKE_LEAD_MAX_NS;
	if (late_ns < est)
		return est > WAKE_P99_DOWN_NS ? est - WAKE_P99_DOWN_NS : 0;
	return est;
}

/* A self-waking client's lead: its @lead (timer_lead_other_ns), raised to
 * cover the base's wake-ups (@p99, 0: none measured yet). A lead of 0
 * stays 0: records at their expiry, as configured. */
static inline uint64_t wake_lead(uint64_t lead, uint64_t p99)
{
	uint64_t want;

	if (lead == 0 || p99 == 0)
		return lead;
	want = p99 + WAKE_LEAD_MARGIN_NS;
	if (want > WAKE_LEAD_MAX_NS)
		want = WAKE_LEAD_MAX_NS;
	return want > lead ? want : lead;
}

#endif
