/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The timer wheel (see wheel.h for the contract and the lateness table).
 *
 * Level n counts in slots of 8^n ticks; slot s comes due at tick s * 8^n,
 * and lives in bucket s % 64 of the level. w->clk is the next tick to
 * process, so slot ceil(clk / 8^n) is the level's next one to come due.
 * Every pending slot of a level lies within the 64 slots from there (a
 * timer is only placed at a level whose window reaches it), so a bucket
 * never mixes two laps and a rotate + ctz of the level's bitmap finds its
 * next due slot.
 *
 * Buckets are singly linked lists, newest first (an hlist: pprev makes
 * delete O(1)); the timers due in one wheel_expire call are put in
 * (expires, seq) order once, before any runs (sort_due_list).
 */
#include "clockd/timers/wheel.h"

#define LVL_MASK (WHEEL_LVL_SIZE - 1)
#define WALK_TICKS 64 /* wheel_expire visits each tick of a stretch this short */
#define RADIX_BITS 8
#define RADIX (1u << RADIX_BITS)

static unsigned lvl_shift(unsigned lvl)
{
	return lvl * WHEEL_CLK_SHIFT;
}

/* x / 8^lvl, rounded up; cannot overflow for lvl >= 1, and is x for 0. */
static uint64_t slot_ceil(uint64_t x, unsigned lvl)
{
	uint64_t gran_mask = (UINT64_C(1) << lvl_shift(lvl)) - 1;

	return (x >> lvl_shift(lvl)) + ((x & gran_mask) != 0);
}

/* The last slot of the level whose due tick is representable. */
static uint64_t slot_last(unsigned lvl)
{
	return UINT64_MAX >> lvl_shift(lvl);
}

/* No level below this can reach @d ticks ahead (it needs more than 64
 * slots there): the search for the level starts here. */
static unsigned lvl_floor(uint64_t d)
{
	unsigned bits = d ? 64 - (unsigned)__builtin_clzll(d) : 0;

	return bits <= WHEEL_LVL_BITS ? 0 : (bits - WHEEL_LVL_BITS) / WHEEL_CLK_SHIFT;
}

/* The bucket for a timer expiring at @e (>= clk): the lowest level whose
 * window reaches it, in the slot of @e rounded up to the level. */
static unsigned calc_bucket(uint64_t clk, uint64_t e)
{
	unsigned lvl;
	uint64_t s;

	for (lvl = lvl_floor(e - clk); lvl < WHEEL_LEVELS; lvl++) {
		s = slot_ceil(e, lvl);
		if (s - (clk >> lvl_shift(lvl)) < WHEEL_LVL_SIZE) {
			/* Rounded past UINT64_MAX: park one granule early
			 * (still >= clk, or a lower level would have fit). */
			if (s > slot_last(lvl))
				s = slot_last(lvl);
			return lvl * WHEEL_LVL_SIZE + (unsigned)(s & LVL_MASK);
		}
	}
	/* Beyond the top level: park in its farthest slot, before @e. */
	lvl = WHEEL_LEVELS - 1;
	s = (clk >> lvl_shift(lvl)) + LVL_MASK;
	if (s > slot_last(lvl))
		s = slot_last(lvl);
	return lvl * WHEEL_LVL_SIZE + (unsigned)(s & LVL_MASK);
}

static void link_head(struct wheel_timer **head, struct wheel_timer *t)
{
	t->next = *head;
	if (t->next)
		t->next->pprev = &t->next;
	t->pprev = head;
	*head = t;
}

static void unlink_timer(struct wheel *w, struct wheel_timer *t)
{
	*t->pprev = t->next;
	if (t->next)
		t->next->pprev = t->pprev;
	t->pprev = NULL;
	t->next = NULL;
	if (t->bucket != WHEEL_DUE && !w->bucket[t->bucket])
		w->pending[t->bucket / WHEEL_LVL_SIZE] &= ~(UINT64_C(1) << (t->bucket & LVL_MASK));
}

/* Put @t in its bucket for the current clock (a past expiry counts as the
 * next tick). */
static void enqueue(struct wheel *w, struct wheel_timer *t)
{
	uint64_t e = t->expires < w->clk ? w->clk : t->expires;
	unsigned b = calc_bucket(w->clk, e);

	t->bucket = (uint16_t)b;
	link_head(&w->bucket[b], t);
	w->pending[b / WHEEL_LVL_SIZE] |= UINT64_C(1) << (b & LVL_MASK);
}

void wheel_init(struct wheel *w, uint64_t now)
{
	*w = (struct wheel){ .clk = now };
}

void wheel_timer_init(struct wheel_timer *t)
{
	*t = (struct wheel_timer){ .pprev = NULL };
}

bool wheel_pending(const struct wheel_timer *t)
{
	return t->pprev != NULL;
}

size_t wheel_count(const struct wheel *w)
{
	return w->count;
}

void wheel_add(struct wheel *w, struct wheel_timer *t, uint64_t expires)
{
	wheel_del(w, t);
	t->expires = expires;
	t->seq = w->seq++;
	enqueue(w, t);
	w->count++;
}

bool wheel_del(struct wheel *w, struct wheel_timer *t)
{
	if (!wheel_pending(t))
		return false;
	unlink_timer(w, t);
	w->count--;
	return true;
}

/* The due tick of the level's next pending slot; false if none. */
static bool lvl_next(const struct wheel *w, unsigned lvl, uint64_t *due)
{
	uint64_t bits = w->pending[lvl], s0, rot;
	unsigned k, start;

	if (!bits)
		return false;
	s0 = slot_ceil(w->clk, lvl);
	start = (unsigned)(s0 & LVL_MASK);
	rot = start ? bits >> start | bits << (WHEEL_LVL_SIZE - start) : bits;
	k = (unsigned)__builtin_ctzll(rot);
	*due = (s0 + k) << lvl_shift(lvl);
	return true;
}

/* The earliest due tick over all levels; false if the wheel is empty. */
static bool next_due(const struct wheel *w, uint64_t *due)
{
	uint64_t best = UINT64_MAX, t;
	bool any = false;

	for (unsigned lvl = 0; lvl < WHEEL_LEVELS; lvl++) {
		if (lvl_next(w, lvl, &t) && (!any || t < best)) {
			best = t;
			any = true;
		}
	}
	*due = best;
	return any;
}

uint64_t wheel_next_expiry(const struct wheel *w)
{
	uint64_t due;

	return next_due(w, &due) ? due : UINT64_MAX;
}

/* The timers taken to run in one call: how many, their expiries' range. */
struct due_span {
	size_t n;
	uint64_t min, max;
};

/* Empty every bucket due at tick @c: timers due by @now join w->due,
 * parked ones (expiry still after @now) join @later, to go back in once
 * the clock has reached @now (re-queued from @c, a parked timer far from
 * @now would come due again and again on the way: one jump of 2^62 ticks
 * would cost 2^23 rounds). */
static void collect(struct wheel *w, uint64_t c, uint64_t now, struct wheel_timer **later,
		    struct due_span *span)
{
	for (unsigned lvl = 0; lvl < WHEEL_LEVELS; lvl++) {
		uint64_t gran_mask = (UINT64_C(1) << lvl_shift(lvl)) - 1;
		unsigned idx = (unsigned)((c >> lvl_shift(lvl)) & LVL_MASK);
		unsigned b = lvl * WHEEL_LVL_SIZE + idx;
		struct wheel_timer *t, *next;

		if (c & gran_mask)
			break; /* no coarser level has a slot starting at @c */
		if (!(w->pending[lvl] & (UINT64_C(1) << idx)))
			continue;
		t = w->bucket[b];
		w->bucket[b] = NULL;
		w->pending[lvl] &= ~(UINT64_C(1) << idx);
		for (; t; t = next) {
			next = t->next;
			t->bucket = WHEEL_DUE;
			if (t->expires > now) {
				link_head(later, t);
				continue;
			}
			link_head(&w->due, t);
			span->n++;
			if (t->expires < span->min)
				span->min = t->expires;
			if (t->expires > span->max)
				span->max = t->expires;
		}
	}
}

static bool runs_before(const struct wheel_timer *a, const struct wheel_timer *b)
{
	return a->expires != b->expires ? a->expires < b->expires : a->seq < b->seq;
}

static struct wheel_timer *merge(struct wheel_timer *a, struct wheel_timer *b)
{
	struct wheel_timer *head = NULL, **tail = &head;

	while (a && b) {
		struct wheel_timer **from = runs_before(a, b) ? &a : &b;

		*tail = *from;
		tail = &(*from)->next;
		*from = (*from)->next;
	}
	*tail = a ? a : b;
	return head;
}

/* Bottom-up merge sort of a NULL-terminated list by next (pprev is fixed
 * by the caller): runs[i], for i < top, holds a sorted run of 2^i timers
 * or nothing. */
static struct wheel_timer *sort_due(struct wheel_timer *list)
{
	struct wheel_timer *runs[64], *t, *out = NULL;
	unsigned i, top = 0;

	while (list) {
		t = list;
		list = list->next;
		t->next = NULL;
		for (i = 0; i < top && runs[i]; i++) {
			t = merge(runs[i], t);
			runs[i] = NULL;
		}
		runs[i] = t;
		if (i == top)
			top++;
	}
	for (i = 0; i < top; i++)
		if (runs[i])
			out = merge(runs[i], out);
	return out;
}

/* Stable sort by expires alone: least significant byte first, a pass per
 * byte of the range, each a linear walk (a merge sort of k timers walks
 * the list log2(k) times, each step a likely cache miss). */
static struct wheel_timer *radix_by_expires(struct wheel_timer *list, uint64_t min, uint64_t max)
{
	struct wheel_timer *head[RADIX], **tail[RADIX], *t, *next, **out;

	for (unsigned shift = 0; shift < 64 && (max - min) >> shift; shift += RADIX_BITS) {
		for (unsigned d = 0; d < RADIX; d++)
			tail[d] = &head[d];
		for (t = list; t; t = next) {
			unsigned d = (unsigned)((t->expires - min) >> shift) & (RADIX - 1);

			next = t->next;
			*tail[d] = t;
			tail[d] = &t->next;
		}
		out = &list;
		for (unsigned d = 0; d < RADIX; d++) {
			if (tail[d] == &head[d])
				continue;
			*out = head[d];
			out = tail[d];
		}
		*out = NULL;
	}
	return list;
}

/* Set the pprev links along w->due; true if it is in (expires, seq)
 * order. */
static bool link_due(struct wheel *w)
{
	struct wheel_timer **pprev = &w->due, *prev = NULL;
	bool ordered = true;

	for (struct wheel_timer *t = w->due; t; prev = t, t = t->next) {
		t->pprev = pprev;
		pprev = &t->next;
		if (prev && !runs_before(prev, t))
			ordered = false;
	}
	return ordered;
}

/* Put w->due in (expires, seq) order. collect() leaves each bucket's
 * timers in arm order, the coarser and later-due buckets first; among
 * equal expiries that is already arm order (an equal expiry sits at a
 * coarser level only if armed from further away, i.e. earlier), so a
 * stable sort by expires usually finishes the job. When it does not (a
 * parked timer re-queued with its old seq), a merge sort on both keys. */
static void sort_due_list(struct wheel *w, const struct due_span *span)
{
	if (span->n < 2) {
		link_due(w);
		return;
	}
	if (span->n >= RADIX) {
		w->due = radix_by_expires(w->due, span->min, span->max);
		if (link_due(w))
			return;
	}
	w->due = sort_due(w->due);
	link_due(w);
}

/* Tick UINT64_MAX is the last: the clock stays there (see wheel.h). */
static uint64_t tick_after(uint64_t c)
{
	return c == UINT64_MAX ? c : c + 1;
}

size_t wheel_expire(struct wheel *w, uint64_t now, wheel_fn *fn, void *arg)
{
	struct wheel_timer *t, *later = NULL;
	struct due_span span = { .min = UINT64_MAX };
	uint64_t c;
	size_t ran = 0;

	if (now < w->clk)
		return 0;
	/* No callback runs in this loop, so nothing else touches the lists.
	 * A short stretch is walked tick by tick (most ticks check one
	 * bitmap bit), a long one jumps from due bucket to due bucket. */
	while (w->clk <= now) {
		if (now - w->clk < WALK_TICKS)
			c = w->clk;
		else if (!next_due(w, &c) || c > now)
			break;
		w->clk = tick_after(c);
		collect(w, c, now, &later, &span);
		if (c == UINT64_MAX)
			break;
	}
	w->clk = tick_after(now);
	while ((t = later)) {
		later = t->next;
		enqueue(w, t);
	}
	sort_due_list(w, &span);
	/* Pop one at a time: a callback may delete or re-add the others. */
	while ((t = w->due)) {
		unlink_timer(w, t);
		w->count--;
		fn(w, t, arg);
		ran++;
	}
	return ran;
}
