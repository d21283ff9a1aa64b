/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A 4-ary min-heap of nanosecond deadlines for the precise timers, one per
 * CPU thread: the earliest is the deadline to program (timerfd or
 * clock_nanosleep). Equal deadlines come out in arm order (every add or
 * update is an arm, and takes a new sequence number).
 *
 * Intrusive: each node keeps its own position, so delete and update are
 * O(log n) with no search; peek is O(1). The heap's only allocation is its
 * array of node pointers, grown by doubling; when growing fails the call
 * returns -ENOMEM and the heap is as it was. hrheap_reserve makes room in
 * advance (e.g. for a client's quota) so later adds cannot fail.
 *
 * Not thread-safe: one heap per thread.
 */
#ifndef CLOCKD_HRHEAP_H
#define CLOCKD_HRHEAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A node; zero it (or hrheap_node_init) before first use. */
struct hrheap_node {
	uint64_t deadline; /* ns, on the caller's clock */
	uint64_t seq;      /* arm order */
	size_t pos;        /* index in the heap + 1; 0 while not queued */
};

struct hrheap {
	struct hrheap_node **v;
	size_t n, cap;
	uint64_t seq;
};

void hrheap_init(struct hrheap *h);
/* Free the array; the nodes are the caller's (any still queued are simply
 * forgotten: re-init them before reuse). */
void hrheap_fini(struct hrheap *h);
void hrheap_node_init(struct hrheap_node *node);

/* Room for @n nodes in all; 0 or -ENOMEM (heap unchanged). */
int hrheap_reserve(struct hrheap *h, size_t n);
/* Queue @node for @deadline; a queued node is re-armed (hrheap_update).
 * 0, or -ENOMEM with nothing changed. O(log n). */
int hrheap_add(struct hrheap *h, struct hrheap_node *node, uint64_t deadline);
/* Re-arm a queued @node for @deadline (a new arm: it goes after nodes
 * already queued for the same deadline). Cannot fail. O(log n). */
void hrheap_update(struct hrheap *h, struct hrheap_node *node, uint64_t deadline);
/* Dequeue @node; true if it was queued. O(log n). */
bool hrheap_del(struct hrheap *h, struct hrheap_node *node);
bool hrheap_queued(const struct hrheap_node *node);

/* The earliest node (NULL if empty), left queued. O(1). */
struct hrheap_node *hrheap_peek(const struct hrheap *h);
/* The earliest node, dequeued (NULL if empty). O(log n). */
struct hrheap_node *hrheap_pop(struct hrheap *h);
size_t hrheap_count(const struct hrheap *h);

#endif
