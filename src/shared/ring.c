/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The SPSC ring (see ring.h). Ordering, in C11 terms:
 *  - the producer writes slots, then store-releases tail; the consumer
 *    load-acquires tail, then reads those slots: it sees the records whole;
 *  - the consumer reads slots, then store-releases head; the producer
 *    load-acquires head, then overwrites those slots: it never overwrites a
 *    record still being read.
 * Each side keeps its own counter privately and only ever stores it; the
 * peer's counter is loaded, checked (0 <= tail - head <= slots) and cached,
 * so that a busy side touches the peer's cache line only when its cached
 * view runs out (producer: no room left; consumer: fewer records than
 * asked for). Slots are always indexed with our private mask: whatever the
 * peer writes, no access leaves the mapping.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "shared/ring.h"

static bool slots_valid(uint32_t slots)
{
	return slots != 0 && slots <= RING_MAX_SLOTS && (slots & (slots - 1)) == 0;
}

size_t ring_mem_size(uint32_t slots)
{
	if (!slots_valid(slots))
		return 0;
	return sizeof(struct ring_hdr) + (size_t)slots * RING_REC_SIZE;
}

static bool mem_aligned(const void *mem)
{
	return ((uintptr_t)mem & 7) == 0;
}

/* Take this side's view of the ring: private slot count and counters. */
static void ring_bind(struct ring *r, struct ring_hdr *h, uint32_t slots, uint32_t head, uint32_t tail)
{
	r->hdr = h;
	r->slot = (struct ring_rec *)(h + 1);
	r->slots = slots;
	r->mask = slots - 1;
	r->tail = tail;
	r->seen_head = head;
	r->head = head;
	r->seen_tail = tail;
}

int ring_init(struct ring *r, void *mem, size_t size, uint32_t slots)
{
	struct ring_hdr *h = mem;

	if (!mem_aligned(mem) || !slots_valid(slots) || size < ring_mem_size(slots))
		return -EINVAL;
	memset(h, 0, sizeof(*h));
	h->magic = RING_MAGIC;
	h->version = RING_VERSION;
	h->rec_size = RING_REC_SIZE;
	h->slots = slots;
	ring_bind(r, h, slots, 0, 0);
	/* The peer attaches later, through whatever hands it the memory (a
	 * file descriptor over a socket): that hand-over orders these plain
	 * stores before its loads. */
	return 0;
}

int ring_attach(struct ring *r, void *mem, size_t size)
{
	struct ring_hdr *h = mem;
	uint32_t slots, head, tail;

	if (!mem_aligned(mem))
		return -EINVAL;
	if (size < sizeof(*h))
		return -EPROTO;
	/* Read each field once: the peer may be rewriting them. */
	slots = __atomic_load_n(&h->slots, __ATOMIC_RELAXED);
	if (__atomic_load_n(&h->magic, __ATOMIC_RELAXED) != RING_MAGIC ||
	    __atomic_load_n(&h->version, __ATOMIC_RELAXED) != RING_VERSION ||
	    __atomic_load_n(&h->rec_size, __ATOMIC_RELAXED) != RING_REC_SIZE || !slots_valid(slots) ||
	    size < ring_mem_size(slots))
		return -EPROTO;
	head = __atomic_load_n(&h->head, __ATOMIC_ACQUIRE);
	tail = __atomic_load_n(&h->tail, __ATOMIC_ACQUIRE);
	if (tail - head > slots)
		return -EPROTO;
	ring_bind(r, h, slots, head, tail);
	return 0;
}

/* Producer: reload head. Acquire pairs with the consumer's release of head
 * in ring_pop_batch: its reads of the slots it freed are done. */
static int load_head(struct ring *r)
{
	uint32_t head = __atomic_load_n(&r->hdr->head, __ATOMIC_ACQUIRE);

	if (r->tail - head > r->slots)
		return -EPROTO;
	r->seen_head = head;
	return 0;
}

/* Consumer: reload tail. Acquire pairs with the producer's release of tail
 * in ring_push_batch: the records it published are written. */
static int load_tail(struct ring *r)
{
	uint32_t tail = __atomic_load_n(&r->hdr->tail, __ATOMIC_ACQUIRE);

	if (tail - r->head > r->slots)
		return -EPROTO;
	r->seen_tail = tail;
	return 0;
}

/* Copy @n records between @recs and the slots from counter @at on, in at
 * most two pieces (the end of the slot array, then its start). */
static void copy_in(struct ring *r, uint32_t at, const struct ring_rec *recs, uint32_t n)
{
	uint32_t i = at & r->mask, first = r->slots - i < n ? r->slots - i : n;

	memcpy(&r->slot[i], recs, first * sizeof(*recs));
	memcpy(&r->slot[0], recs + first, (n - first) * sizeof(*recs));
}

static void copy_out(struct ring *r, uint32_t at, struct ring_rec *out, uint32_t n)
{
	uint32_t i = at & r->mask, first = r->slots - i < n ? r->slots - i : n;

	memcpy(out, &r->slot[i], first * sizeof(*out));
	memcpy(out + first, &r->slot[0], (n - first) * sizeof(*out));
}

int ring_push_batch(struct ring *r, const struct ring_rec *recs, unsigned n)
{
	uint32_t room = r->slots - (r->tail - r->seen_head);

	if (room < n) {
		if (load_head(r) < 0)
			return -EPROTO;
		room = r->slots - (r->tail - r->seen_head);
	}
	if (n > room)
		n = room;
	if (n == 0)
		return 0;
	copy_in(r, r->tail, recs, n);
	r->tail += n;
	__atomic_store_n(&r->hdr->tail, r->tail, __ATOMIC_RELEASE);
	return (int)n;
}

int ring_push(struct ring *r, const struct ring_rec *rec)
{
	return ring_push_batch(r, rec, 1);
}

int ring_space(struct ring *r)
{
	if (load_head(r) < 0)
		return -EPROTO;
	return (int)(r->slots - (r->tail - r->seen_head));
}

int ring_pop_batch(struct ring *r, struct ring_rec *out, unsigned max)
{
	uint32_t avail = r->seen_tail - r->head;

	if (avail < max) {
		if (load_tail(r) < 0)
			return -EPROTO;
		avail = r->seen_tail - r->head;
	}
	if (max > avail)
		max = avail;
	if (max == 0)
		return 0;
	copy_out(r, r->head, out, max);
	r->head += max;
	__atomic_store_n(&r->hdr->head, r->head, __ATOMIC_RELEASE);
	return (int)max;
}

int ring_count(struct ring *r)
{
	if (load_tail(r) < 0)
		return -EPROTO;
	return (int)(r->seen_tail - r->head);
}

/*
 * The lost wake-up race: the consumer finds the ring empty and decides to
 * sleep; meanwhile the producer publishes a record and, seeing nobody
 * waiting, does not write the eventfd; the consumer sleeps on a non-empty
 * ring. The two sides each store, then load what the other stored:
 *	consumer: waiting = 1;  fence;  load tail   (ring_prepare_wait)
 *	producer: store tail;   fence;  load waiting (ring_needs_wake)
 * With a sequentially consistent fence on both sides, at least one of the
 * loads sees the other side's store: either the consumer sees the new tail
 * and does not sleep, or the producer sees waiting == 1 and writes the
 * eventfd. The eventfd counts, so a write that lands before the consumer
 * reaches poll() still wakes it. Neither fence can be weaker: release or
 * acquire alone does not order a store before a later load.
 *
 * With a self-wake (waiting == 2), wake_at is stored before waiting is
 * released: a producer that acquires 2 reads that wait's wake_at or a
 * later wait's, and a wait it does not see has seen its records (the
 * fences). So the consumer either pops the records or sleeps no longer
 * than the wake_at the producer compared.
 */
static bool announce(struct ring *r, uint32_t how)
{
	__atomic_store_n(&r->hdr->consumer_waiting, how, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST); /* pairs with needs_wake */
	if (load_tail(r) == 0 && r->seen_tail == r->head)
		return true;
	ring_cancel_wait(r);
	return false;
}

bool ring_prepare_wait(struct ring *r)
{
	return announce(r, 1);
}

bool ring_prepare_wait_until(struct ring *r, uint64_t at)
{
	__atomic_store_n(&r->hdr->wake_at, at, __ATOMIC_RELAXED);
	return announce(r, 2);
}

void ring_cancel_wait(struct ring *r)
{
	__atomic_store_n(&r->hdr->consumer_waiting, 0, __ATOMIC_RELAXED);
}

static bool needs_wake(struct ring *r, bool by, uint64_t due)
{
	uint32_t w;

	__atomic_thread_fence(__ATOMIC_SEQ_CST); /* pairs with announce */
	/* Load first: a busy consumer's line is only read, not dirtied. The
	 * exchange makes one eventfd write per sleep, whoever clears first. */
	w = __atomic_load_n(&r->hdr->consumer_waiting, __ATOMIC_ACQUIRE);
	if (!w)
		return false;
	if (by && w == 2 && __atomic_load_n(&r->hdr->wake_at, __ATOMIC_RELAXED) <= due)
		return false; /* it wakes by itself in time: left announced */
	return __atomic_exchange_n(&r->hdr->consumer_waiting, 0, __ATOMIC_RELAXED) != 0;
}

int ring_consumer_sleep(const struct ring *r)
{
	/* The peer writes the word: any value but 0 and 2 is a plain wait,
	 * as needs_wake takes it. */
	uint32_t w = __atomic_load_n(&r->hdr->consumer_waiting, __ATOMIC_RELAXED);

	return w == 0 ? 0 : w == 2 ? 2 : 1;
}

bool ring_needs_wake(struct ring *r)
{
	return needs_wake(r, false, 0);
}

bool ring_needs_wake_by(struct ring *r, uint64_t due)
{
	return needs_wake(r, true, due);
}

void ring_prefault(const struct ring *r)
{
	const char *mem = (const char *)r->hdr;
	size_t len = ring_mem_size(r->slots);
	long page = sysconf(_SC_PAGESIZE);

	if (!mem || len == 0)
		return;
	if (page <= 0)
		page = 4096;
	/* Atomic loads: the peer may be writing there (the value is not
	 * used, but a plain read would be a data race). */
	for (size_t off = 0; off < len; off += (size_t)page)
		(void)__atomic_load_n(mem + off, __ATOMIC_RELAXED);
	(void)__atomic_load_n(mem + len - 1, __ATOMIC_RELAXED);
}
