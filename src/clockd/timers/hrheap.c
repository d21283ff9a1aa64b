/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The deadline heap (see hrheap.h). 4-ary rather than binary: half the
 * depth, and a node's four children share a cache line of pointers, which
 * is what sift-down pays for at a million timers.
 */
#include <errno.h>
#include <stdlib.h>

#include "clockd/timers/hrheap.h"

#define ARITY 4
#define MIN_CAP 16

static bool earlier(const struct hrheap_node *a, const struct hrheap_node *b)
{
	return a->deadline != b->deadline ? a->deadline < b->deadline : a->seq < b->seq;
}

static void place(struct hrheap *h, size_t i, struct hrheap_node *node)
{
	h->v[i] = node;
	node->pos = i + 1;
}

/* Move @node, which belongs at or above slot @i, up to its place. */
static void sift_up(struct hrheap *h, size_t i, struct hrheap_node *node)
{
	while (i > 0) {
		size_t parent = (i - 1) / ARITY;

		if (!earlier(node, h->v[parent]))
			break;
		place(h, i, h->v[parent]);
		i = parent;
	}
	place(h, i, node);
}

/* The earliest child of slot @i, or 0 if it has none. */
static size_t min_child(const struct hrheap *h, size_t i)
{
	size_t first = i * ARITY + 1, best = 0;

	for (size_t c = first; c < first + ARITY && c < h->n; c++)
		if (!best || earlier(h->v[c], h->v[best]))
			best = c;
	return best;
}

/* Move @node, which belongs at or below slot @i, down to its place. */
static void sift_down(struct hrheap *h, size_t i, struct hrheap_node *node)
{
	size_t c;

	while ((c = min_child(h, i)) && earlier(h->v[c], node)) {
		place(h, i, h->v[c]);
		i = c;
	}
	place(h, i, node);
}

/* Put @node, now in slot @i (or meant to be), where it belongs. */
static void resift(struct hrheap *h, size_t i, struct hrheap_node *node)
{
	if (i > 0 && earlier(node, h->v[(i - 1) / ARITY]))
		sift_up(h, i, node);
	else
		sift_down(h, i, node);
}

void hrheap_init(struct hrheap *h)
{
	*h = (struct hrheap){ .v = NULL };
}

void hrheap_fini(struct hrheap *h)
{
	free(h->v);
	hrheap_init(h);
}

void hrheap_node_init(struct hrheap_node *node)
{
	*node = (struct hrheap_node){ .pos = 0 };
}

int hrheap_reserve(struct hrheap *h, size_t n)
{
	struct hrheap_node **v;
	size_t cap = h->cap ? h->cap : MIN_CAP;

	if (n <= h->cap)
		return 0;
	while (cap < n) {
		if (cap > SIZE_MAX / 2 / sizeof(*v))
			return -ENOMEM;
		cap *= 2;
	}
	v = realloc(h->v, cap * sizeof(*v));
	if (!v)
		return -ENOMEM;
	h->v = v;
	h->cap = cap;
	return 0;
}

int hrheap_add(struct hrheap *h, struct hrheap_node *node, uint64_t deadline)
{
	int r;

	if (hrheap_queued(node)) {
		hrheap_update(h, node, deadline);
		return 0;
	}
	if (h->n == SIZE_MAX)
		return -ENOMEM;
	r = hrheap_reserve(h, h->n + 1);
	if (r < 0)
		return r;
	node->deadline = deadline;
	node->seq = h->seq++;
	sift_up(h, h->n++, node);
	return 0;
}

void hrheap_update(struct hrheap *h, struct hrheap_node *node, uint64_t deadline)
{
	node->deadline = deadline;
	node->seq = h->seq++;
	resift(h, node->pos - 1, node);
}

bool hrheap_del(struct hrheap *h, struct hrheap_node *node)
{
	size_t i;
	struct hrheap_node *last;

	if (!hrheap_queued(node))
		return false;
	i = node->pos - 1;
	node->pos = 0;
	last = h->v[--h->n];
	if (i != h->n)
		resift(h, i, last); /* the last node fills the hole */
	return true;
}

bool hrheap_queued(const struct hrheap_node *node)
{
	return node->pos != 0;
}

struct hrheap_node *hrheap_peek(const struct hrheap *h)
{
	return h->n ? h->v[0] : NULL;
}

struct hrheap_node *hrheap_pop(struct hrheap *h)
{
	struct hrheap_node *top = hrheap_peek(h);

	if (top)
		hrheap_del(h, top);
	return top;
}

size_t hrheap_count(const struct hrheap *h)
{
	return h->n;
}
