/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The deadline heap (src/clockd/timers/hrheap.h) against a naive reference: a
 * pool of nodes, each with the deadline and arm number the test itself
 * gave it; the reference's earliest is a linear scan by (deadline, arm
 * number). 200 000 random adds, deletes, updates and pops on deadlines from
 * a narrow range (many equal) and a wide one: after every operation the
 * heap's answer, its peek and its count match the reference; a final drain
 * pops everything in the reference's sorted order. A reservation that
 * cannot be met fails with -ENOMEM and leaves the heap as it was.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clockd/timers/hrheap.h"
#include "tests/tap.h"
#include "tests/util.h"

#define POOL 1000
#define OPS 200000

/* Under AddressSanitizer, an impossible allocation must return NULL (as
 * it does in production) rather than abort the test. The runtime looks the
 * hook up by name: it must be visible (the build hides symbols). */
__attribute__((visibility("default"))) const char *__asan_default_options(void);
__attribute__((visibility("default"))) const char *__asan_default_options(void)
{
	return "allocator_may_return_null=1";
}

struct ref {
	struct hrheap_node node[POOL];
	bool queued[POOL];
	uint64_t deadline[POOL], arm[POOL];
	uint64_t arms;
	size_t count;
};

static uint64_t rng_state = 0x2545f4914f6cdd1du;

static uint64_t rnd(void)
{
	return tu_rng(&rng_state);
}

/* Narrow (many equal) or wide deadlines, half and half. */
static uint64_t rnd_deadline(void)
{
	return rnd() % 2 ? 1000 + rnd() % 16 : rnd();
}

static bool ref_before(const struct ref *ref, size_t a, size_t b)
{
	if (ref->deadline[a] != ref->deadline[b])
		return ref->deadline[a] < ref->deadline[b];
	return ref->arm[a] < ref->arm[b];
}

/* The reference's earliest queued node, or POOL if none. */
static size_t ref_min(const struct ref *ref)
{
	size_t best = POOL;

	for (size_t i = 0; i < POOL; i++)
		if (ref->queued[i] && (best == POOL || ref_before(ref, i, best)))
			best = i;
	return best;
}

static void ref_arm(struct ref *ref, size_t i, uint64_t deadline)
{
	ref->count += !ref->queued[i];
	ref->queued[i] = true;
	ref->deadline[i] = deadline;
	ref->arm[i] = ref->arms++;
}

/* Operation mixes: adds first in a growing phase, removals in a shrinking
 * one, so the heap's size sweeps its range (and its array grows). */
enum op { OP_ADD, OP_UPDATE, OP_DEL, OP_POP };
static const enum op mix[2][6] = {
	{ OP_ADD, OP_ADD, OP_ADD, OP_UPDATE, OP_DEL, OP_POP },
	{ OP_ADD, OP_UPDATE, OP_DEL, OP_DEL, OP_POP, OP_POP },
};

/* One random operation on heap and reference; false on a mismatch. */
static bool step(struct hrheap *h, struct ref *ref, bool shrinking)
{
	size_t i = rnd() % POOL, m;
	uint64_t d = rnd_deadline();
	struct hrheap_node *got;

	switch (mix[shrinking][rnd() % 6]) {
	case OP_ADD: /* re-arms a queued one */
		if (hrheap_add(h, &ref->node[i], d) != 0)
			return false;
		ref_arm(ref, i, d);
		return true;
	case OP_UPDATE: /* a queued one */
		if (!ref->queued[i])
			return !hrheap_queued(&ref->node[i]);
		hrheap_update(h, &ref->node[i], d);
		ref_arm(ref, i, d);
		return true;
	case OP_DEL:
		if (hrheap_del(h, &ref->node[i]) != ref->queued[i])
			return false;
		ref->count -= ref->queued[i];
		ref->queued[i] = false;
		return !hrheap_queued(&ref->node[i]);
	case OP_POP:
		m = ref_min(ref);
		got = hrheap_pop(h);
		if (m == POOL)
			return got == NULL;
		ref->queued[m] = false;
		ref->count--;
		return got == &ref->node[m] && !hrheap_queued(got);
	}
	return false;
}

static bool agrees(const struct hrheap *h, const struct ref *ref)
{
	size_t m = ref_min(ref);
	struct hrheap_node *top = hrheap_peek(h);

	if (hrheap_count(h) != ref->count)
		return false;
	return m == POOL ? top == NULL : top == &ref->node[m] && top->deadline == ref->deadline[m];
}

static void test_random(struct hrheap *h, struct ref *ref)
{
	long bad_op = -1, bad_state = -1;
	size_t peak = 0;
	bool drained = true;

	for (long k = 0; k < OPS && bad_op < 0 && bad_state < 0; k++) {
		if (!step(h, ref, (k / 20000) % 2))
			bad_op = k;
		else if (!agrees(h, ref))
			bad_state = k;
		if (ref->count > peak)
			peak = ref->count;
	}
	tap_ok(bad_op < 0, "random ops: each add/update/del/pop answers as the reference (first bad op %ld)", bad_op);
	tap_ok(bad_state < 0, "random ops: peek and count match the reference after each op (first bad %ld)", bad_state);
	tap_diag("peak %zu queued of %d", peak, POOL);
	for (size_t m; (m = ref_min(ref)) != POOL;) {
		struct hrheap_node *got = hrheap_pop(h);

		ref->queued[m] = false;
		ref->count--;
		if (got != &ref->node[m])
			drained = false;
	}
	tap_ok(drained && hrheap_pop(h) == NULL && hrheap_count(h) == 0,
	       "drain: pops in (deadline, arm order), then empty");
}

/* Equal deadlines, armed in a scrambled pool order, pop in arm order; an
 * update is a new arm. */
static void test_equal(struct hrheap *h, struct ref *ref)
{
	bool ok = true;
	size_t k;

	memset(ref, 0, sizeof(*ref));
	for (k = 0; k < POOL; k++)
		hrheap_add(h, &ref->node[(k * 379) % POOL], 42);
	hrheap_update(h, &ref->node[0], 42); /* armed first, now last */
	for (k = 1; k < POOL; k++)
		ok &= hrheap_pop(h) == &ref->node[(k * 379) % POOL];
	ok &= hrheap_pop(h) == &ref->node[0];
	tap_ok(ok && hrheap_count(h) == 0, "equal deadlines pop in arm order; an update counts as a new arm");
}

static void test_nomem(struct hrheap *h, struct ref *ref)
{
	size_t cap, n;
	struct hrheap_node *top;
	int r;

	memset(ref, 0, sizeof(*ref));
	for (size_t i = 0; i < 100; i++)
		hrheap_add(h, &ref->node[i], rnd_deadline());
	cap = h->cap;
	n = hrheap_count(h);
	top = hrheap_peek(h);
	r = hrheap_reserve(h, SIZE_MAX / 16); /* half the address space */
	tap_ok(r == -ENOMEM && h->cap == cap && hrheap_count(h) == n && hrheap_peek(h) == top,
	       "reserve beyond memory: -ENOMEM, heap unchanged (%d)", r);
	r = hrheap_reserve(h, SIZE_MAX);
	tap_ok(r == -ENOMEM && h->cap == cap, "reserve beyond size_t: -ENOMEM (%d)", r);
	tap_ok(hrheap_reserve(h, 5000) == 0 && h->cap >= 5000 && hrheap_count(h) == n && hrheap_peek(h) == top,
	       "reserve that fits: 0, nodes kept");
}

int main(void)
{
	static struct ref ref;
	struct hrheap h;

	tap_plan(3 + 1 + 3);
	hrheap_init(&h);
	test_random(&h, &ref);
	test_equal(&h, &ref);
	test_nomem(&h, &ref);
	hrheap_fini(&h);
	return tap_done();
}
