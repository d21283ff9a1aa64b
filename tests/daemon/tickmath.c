/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Exact tick arithmetic (src/shared/tickmath.c) against a reference that
 * shares none of its code and uses no 128-bit integer: k = q*hz + r gives
 * floor(k*1e9/hz) = q*1e9 + floor(r*1e9/hz), where r*1e9 < 1e14.
 */
#include <inttypes.h>
#include <stdio.h>

#include "shared/tickmath.h"
#include "tests/tap.h"
#include "tests/util.h"

#define SPAN (1ull << 33)   /* simulated ticks: far past the 32-bit wrap */
#define RANDOM_KS 4000      /* pseudo-random k per HZ */
#define DRIFT_NS 20000      /* consecutive N checked for drift, then sampled */

static const uint32_t hzs[] = { 1, 24, 100, 250, 1000, 1024, 1200, 100000 };
#define NHZ (sizeof(hzs) / sizeof(hzs[0]))

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng(void)
{
	return tu_rng(&rng_state);
}

static uint64_t ref_offset(uint64_t k, uint32_t hz)
{
	uint64_t q = k / hz, r = k % hz;

	return q * NSEC_PER_SEC + r * NSEC_PER_SEC / hz;
}

/* Every property of one k; the number of properties that failed. */
static int check_k(uint64_t k, uint32_t hz)
{
	uint64_t off = tick_offset_ns(k, hz);
	uint64_t step = tick_offset_ns(k + 1, hz) - off;
	uint64_t lo = NSEC_PER_SEC / hz, hi = (NSEC_PER_SEC + hz - 1) / hz;
	int bad = 0;

	if (off != ref_offset(k, hz)) {
		tap_diag("hz %u k %" PRIu64 ": offset %" PRIu64 ", expected %" PRIu64, hz, k, off,
			 ref_offset(k, hz));
		bad++;
	}
	if (tick_index(off, hz) != k) {
		tap_diag("hz %u k %" PRIu64 ": tick_index(offset) = %" PRIu64, hz, k, tick_index(off, hz));
		bad++;
	}
	if (k >= 1 && tick_index(off - 1, hz) != k - 1) {
		tap_diag("hz %u k %" PRIu64 ": tick_index(offset - 1) = %" PRIu64, hz, k,
			 tick_index(off - 1, hz));
		bad++;
	}
	if (step != lo && step != hi) {
		tap_diag("hz %u k %" PRIu64 ": interval %" PRIu64 " not in {%" PRIu64 ", %" PRIu64 "}",
			 hz, k, step, lo, hi);
		bad++;
	}
	return bad;
}

static void test_ticks(uint32_t hz)
{
	const uint64_t edges[] = { 0, 1, hz - 1, hz, (1ull << 32) - 1, 1ull << 32, SPAN - 1, SPAN };
	int bad = 0, n = 0;

	for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]); i++, n++)
		bad += check_k(edges[i], hz);
	for (int i = 0; i < RANDOM_KS; i++, n++)
		bad += check_k(rng() % (SPAN + 1), hz);
	tap_ok(bad == 0, "hz %u: offset exact, tick_index inverts it, intervals floor/ceil (%d k)", hz, n);
}

static void test_no_drift(uint32_t hz)
{
	uint64_t nmax = SPAN / hz;
	int bad = 0;

	for (uint64_t n = 0; n <= nmax; n++) {
		if (n == DRIFT_NS && nmax > 2 * DRIFT_NS)
			n = nmax - DRIFT_NS; /* the far end too */
		if (tick_offset_ns((uint64_t)hz * n, hz) != n * NSEC_PER_SEC && bad++ < 3)
			tap_diag("hz %u: tick %" PRIu64 " at %" PRIu64 " ns", hz, (uint64_t)hz * n,
				 tick_offset_ns((uint64_t)hz * n, hz));
	}
	for (int i = 0; i < RANDOM_KS; i++) {
		uint64_t n = rng() % (nmax + 1);

		if (tick_offset_ns((uint64_t)hz * n, hz) != n * NSEC_PER_SEC)
			bad++;
	}
	tap_ok(bad == 0, "hz %u: tick hz*N is exactly N s, N up to %" PRIu64, hz, nmax);
}

static void test_initial_jiffies(uint32_t hz)
{
	uint64_t ij = initial_jiffies_for(hz, 300);

	tap_ok(ij + 300ull * hz == 1ull << 32, "hz %u: initial_jiffies %" PRIu64 " wraps 300 s later", hz, ij);
}

/* ns for @cycles with mult/shift; false if the product overflows. */
static bool convert(uint64_t cycles, uint32_t mult, uint32_t shift, uint64_t *ns)
{
	uint64_t p;

	if (__builtin_mul_overflow(cycles, (uint64_t)mult, &p))
		return false;
	*ns = p >> shift;
	return true;
}

static void test_mult_shift(uint64_t freq)
{
	/* What the daemon asks for: deltas up to 16 s. */
	uint64_t max_cycles = 16 * freq, ns = 0, top, base;
	uint32_t mult = 0, shift = 0;
	bool ok = calc_mult_shift(freq, max_cycles, &mult, &shift);

	if (!tap_ok(ok, "%" PRIu64 " Hz: calc_mult_shift finds mult/shift", freq)) {
		tap_skip("no mult/shift");
		tap_skip("no mult/shift");
		return;
	}
	base = (NSEC_PER_SEC << shift) - 1;
	ok = convert(freq, mult, shift, &ns);
	tap_ok(ok && (ns >= NSEC_PER_SEC ? ns - NSEC_PER_SEC : NSEC_PER_SEC - ns) <= 1,
	       "%" PRIu64 " Hz: mult %u shift %u converts 1 s of cycles to %" PRIu64 " ns", freq, mult,
	       shift, ns);
	ok = !__builtin_mul_overflow(max_cycles, (uint64_t)mult, &top) &&
	     !__builtin_add_overflow(top, base, &top);
	tap_ok(ok, "%" PRIu64 " Hz: %" PRIu64 " cycles * mult + a base below 1 s never overflow", freq,
	       max_cycles);
}

int main(void)
{
	static const uint64_t freqs[] = { 1000000, 10000000, 100000000, 1000000000,
					  2100000000, 3700000000, 5000000000 };
	const size_t nfreq = sizeof(freqs) / sizeof(freqs[0]);

	tap_plan((int)(NHZ * 3 + nfreq * 3));
	for (size_t i = 0; i < NHZ; i++) {
		test_ticks(hzs[i]);
		test_no_drift(hzs[i]);
		test_initial_jiffies(hzs[i]);
	}
	for (size_t i = 0; i < nfreq; i++)
		test_mult_shift(freqs[i]);
	return tap_done();
}
