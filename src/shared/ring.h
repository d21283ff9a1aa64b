/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A single-producer single-consumer ring of fixed 32-byte records in memory
 * two processes share (a memfd both map, at any address: the ring holds no
 * pointers), with an eventfd wake-up so that an idle consumer sleeps and a
 * busy one makes no system call. It carries timer submissions (client to
 * daemon) and expiry records (daemon to client); what a record means is the
 * business of the layer above.
 *
 * Errors: -errno. -EINVAL for our own bad arguments, -EPROTO when the shared
 * memory is not a valid ring: a bad header at attach, or at run time the
 * peer's counter out of range (a corrupted or hostile peer). After -EPROTO
 * the peer is broken; drop it. Whatever the peer writes, the ring never
 * reads or writes outside the @size bytes it was given.
 *
 * Threads: one struct ring per side. The producer calls only ring_push*,
 * ring_space and ring_needs_wake; the consumer only ring_pop_batch,
 * ring_count, ring_prepare_wait and ring_cancel_wait. One thread may play
 * both sides on one handle (tests do).
 *
 * Wake-up, consumer side:
 *	for (;;) {
 *		n = ring_pop_batch(r, buf, max);     (handle n > 0, stop on < 0)
 *		if (n == 0 && ring_prepare_wait(r)) {
 *			poll() the eventfd, read() it to reset it;
 *			ring_cancel_wait(r);             (also after a timeout)
 *		}
 *	}
 * producer side, after EVERY push that published records (also a partial
 * push into a full ring, before waiting for space: the consumer may be
 * asleep on an empty ring that the push just filled):
 *	if (ring_needs_wake(r)) write() 1 to the eventfd;
 * A wake-up may be spurious (the consumer finds nothing): loop again.
 *
 * A consumer that will wake by itself (a timeout) may say when, on a
 * scale the producer knows (ring_prepare_wait_until); a producer that
 * knows by when its records are due asks ring_needs_wake_by(), which
 * spares the eventfd when the consumer wakes by then anyway. A consumer
 * woken by its timeout withdraws the announcement (ring_cancel_wait) and
 * pops as after any wake-up. An older producer takes the announcement
 * for a plain one.
 */
#ifndef CLOCKD_SHARED_RING_H
#define CLOCKD_SHARED_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RING_MAGIC 0x676e6972u /* "ring" in little-endian bytes */
#define RING_VERSION 1u
#define RING_REC_SIZE 32u
#define RING_CACHELINE 64u
/* So that any count of records fits an int, and tail - head (mod 2^32) is
 * unambiguous. 2^30 slots is 32 GiB: no ring comes near it. */
#define RING_MAX_SLOTS (1u << 30)

/* One record: four words whose meaning the layer above defines. The ring
 * copies records in and out whole; the consumer validates its private copy,
 * never the slot (a hostile producer may rewrite a slot while it is read). */
struct ring_rec {
	uint64_t word[4];
};

/*
 * The shared layout, fixed width and the same for 32- and 64-bit processes.
 * Each counter is written by one side only and sits on its own cache line,
 * so the producer's stores to tail do not evict the consumer's head.
 * head and tail are free-running (they wrap at 2^32); slot i is
 * slot[i & (slots - 1)], and tail - head (mod 2^32) is the records queued.
 */
struct ring_hdr {
	/* line 0: written by ring_init, read-only afterwards */
	uint32_t magic;
	uint16_t version;
	uint16_t rec_size;          /* RING_REC_SIZE */
	uint32_t slots;             /* a power of two, 1 .. RING_MAX_SLOTS */
	uint32_t reserved0[13];
	/* line 1: the consumer's */
	uint32_t head;              /* records consumed */
	uint32_t consumer_waiting;  /* 1: the consumer may be asleep, 2: ...
				     * and wakes itself by wake_at */
	uint64_t wake_at;           /* with 2: when, on the producer's scale */
	uint32_t reserved1[12];
	/* line 2: the producer's */
	uint32_t tail;              /* records published */
	uint32_t reserved2[15];
	/* then slots records of RING_REC_SIZE bytes */
};

_Static_assert(sizeof(struct ring_rec) == RING_REC_SIZE, "record size");
_Static_assert(offsetof(struct ring_hdr, slots) == 8, "slots offset");
_Static_assert(offsetof(struct ring_hdr, head) == 1 * RING_CACHELINE, "head on line 1");
_Static_assert(offsetof(struct ring_hdr, consumer_waiting) == 1 * RING_CACHELINE + 4, "waiting beside head");
_Static_assert(offsetof(struct ring_hdr, wake_at) == 1 * RING_CACHELINE + 8, "wake_at beside waiting");
_Static_assert(offsetof(struct ring_hdr, tail) == 2 * RING_CACHELINE, "tail on line 2");
_Static_assert(sizeof(struct ring_hdr) == 3 * RING_CACHELINE, "header size");

/* A process's handle on one side of a ring. The slot count and our own
 * counter are private copies: a peer that rewrites the header after attach
 * changes nothing we index with. */
struct ring {
	struct ring_hdr *hdr;
	struct ring_rec *slot;
	uint32_t slots;
	uint32_t mask;
	uint32_t tail;        /* producer: our counter */
	uint32_t seen_head;   /* producer: head when last read (validated) */
	uint32_t head;        /* consumer: our counter */
	uint32_t seen_tail;   /* consumer: tail when last read (validated) */
};

/* Bytes of shared memory a ring of @slots records needs (0 if @slots is
 * not a power of two in 1 .. RING_MAX_SLOTS). */
size_t ring_mem_size(uint32_t slots);

/* Lay out an empty ring of @slots records in @mem (@size bytes, 8-byte
 * aligned, at least ring_mem_size(slots)) and attach @r to it. Done once,
 * by the side that creates the memory, before the peer attaches.
 * 0, or -EINVAL. */
int ring_init(struct ring *r, void *mem, size_t size, uint32_t slots);

/* Attach @r to a ring made by ring_init in @mem (@size bytes: the whole
 * mapping). Checks the header against @size and the counters against the
 * slot count. 0, -EINVAL (@mem misaligned), or -EPROTO. */
int ring_attach(struct ring *r, void *mem, size_t size);

/* Producer: copy up to @n records in and publish them. Returns how many
 * were pushed (fewer than @n, or 0, when the ring is full), or -EPROTO. */
int ring_push_batch(struct ring *r, const struct ring_rec *recs, unsigned n);
/* Producer: one record; 1, 0 when full, or -EPROTO. */
int ring_push(struct ring *r, const struct ring_rec *rec);
/* Producer: free slots now, or -EPROTO. */
int ring_space(struct ring *r);
/* Producer, after a push that published records: true if the consumer may
 * be asleep; the flag is cleared and the caller must write the eventfd. */
bool ring_needs_wake(struct ring *r);
/* Producer: the same, for records none of which is due before @due: false
 * also when the consumer announced it wakes by itself by @due. */
bool ring_needs_wake_by(struct ring *r, uint64_t due);

/* Producer: how the consumer last said it sleeps, for a choice of the
 * producer's own (not for whether to wake it): 0 it did not (busy), 1 on
 * the eventfd, 2 with a wake-up of its own (ring_prepare_wait_until). */
int ring_consumer_sleep(const struct ring *r);

/* Consumer: copy out up to @max records and release their slots. Returns
 * how many (0 when empty), or -EPROTO. */
int ring_pop_batch(struct ring *r, struct ring_rec *out, unsigned max);
/* Consumer: records queued now, or -EPROTO. */
int ring_count(struct ring *r);
/* Consumer, about to sleep: announce it, then look again. True: the ring
 * is empty, sleep on the eventfd (the producer will write it). False: the
 * ring is not empty (or the peer is broken), pop again; nothing to undo. */
bool ring_prepare_wait(struct ring *r);
/* Consumer: the same, announcing that it wakes by itself at @at (the
 * producer's scale) at the latest; a producer may then write the eventfd
 * only for records due before @at. */
bool ring_prepare_wait_until(struct ring *r, uint64_t at);
/* Consumer, after sleeping (woken or not): withdraw the announcement so
 * that the producer stops writing the eventfd. */
void ring_cancel_wait(struct ring *r);

/* Either side, before the ring's first records: map every page of it into
 * this process now. Otherwise each page's first touch is a page fault in
 * the hot path, once per 128 records in the ring's first lap: 10 us or
 * more in a VM, a late expiry in a hundred. A read per page: a read fault
 * on shared memory maps the page writable as well, and brings in up to 16
 * neighbours already in memory with it (fault-around). */
void ring_prefault(const struct ring *r);

#endif
