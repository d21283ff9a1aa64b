/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The ring on one thread, against its contract (src/shared/ring.h): sizes,
 * empty and full, FIFO order and partial batches, free-running counters
 * wrapping past 2^32, the wake-up flag, prefaulting, and a hostile header
 * or counters refused with -EPROTO. Every ring sits at the very end of a mapping,
 * between two PROT_NONE guard pages: an access outside it would crash the
 * test instead of passing unnoticed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "shared/ring.h"
#include "tests/tap.h"

#define SLOTS 64u

struct guarded {
	void *map;
	size_t map_len;
	void *mem;    /* the last @size bytes before the upper guard page */
	size_t size;
};

static void *guarded_map(struct guarded *g, size_t size)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t body = (size + page - 1) / page * page;
	char *p;

	g->map_len = body + 2 * page;
	g->map = mmap(NULL, g->map_len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (g->map == MAP_FAILED)
		tap_bail("mmap: %s", strerror(errno));
	p = (char *)g->map + page;
	if (mprotect(p, body, PROT_READ | PROT_WRITE) < 0)
		tap_bail("mprotect: %s", strerror(errno));
	g->size = size;
	g->mem = p + body - size;
	return g->mem;
}

static void guarded_unmap(struct guarded *g)
{
	munmap(g->map, g->map_len);
}

static struct ring_rec make_rec(uint64_t seq)
{
	return (struct ring_rec){ { seq, ~seq, seq * 0x9e3779b97f4a7c15u, seq ^ 0x5555aaaa5555aaaau } };
}

static bool rec_is(const struct ring_rec *r, uint64_t seq)
{
	struct ring_rec want = make_rec(seq);

	return memcmp(r, &want, sizeof(want)) == 0;
}

static void test_sizes(void)
{
	tap_ok(ring_mem_size(0) == 0 && ring_mem_size(3) == 0 && ring_mem_size(48) == 0 &&
		       ring_mem_size(RING_MAX_SLOTS * 2) == 0,
	       "ring_mem_size refuses 0, 3, 48 and 2^31 slots");
	tap_ok(ring_mem_size(1) == 192 + 32 && ring_mem_size(SLOTS) == 192 + SLOTS * 32,
	       "ring_mem_size is the 192-byte header plus 32 bytes a slot");
}

static void test_init_args(void)
{
	struct guarded g;
	struct ring r;
	char *mem = guarded_map(&g, ring_mem_size(SLOTS) + 8);

	tap_ok(ring_init(&r, mem, g.size, 48) == -EINVAL, "init: 48 slots (not a power of two) is -EINVAL");
	tap_ok(ring_init(&r, mem, g.size, 0) == -EINVAL, "init: 0 slots is -EINVAL");
	tap_ok(ring_init(&r, mem, ring_mem_size(SLOTS) - 1, SLOTS) == -EINVAL,
	       "init: one byte short of ring_mem_size is -EINVAL");
	tap_ok(ring_init(&r, mem + 4, g.size - 4, SLOTS) == -EINVAL, "init: memory not 8-byte aligned is -EINVAL");
	tap_ok(ring_init(&r, mem, g.size, SLOTS) == 0, "init: a valid ring");
	guarded_unmap(&g);
}

static void test_empty_full_fifo(void)
{
	struct guarded g;
	struct ring r;
	struct ring_rec out[SLOTS + 8], in[SLOTS + 8];
	unsigned pushed = 0, popped = 0;
	bool order = true;
	int n;
	void *mem = guarded_map(&g, ring_mem_size(SLOTS));

	ring_init(&r, mem, g.size, SLOTS);
	tap_ok(ring_pop_batch(&r, out, 8) == 0 && ring_count(&r) == 0 && ring_space(&r) == (int)SLOTS,
	       "empty: pop returns 0, count 0, space %u", SLOTS);
	for (uint64_t s = 0; ring_push(&r, &(struct ring_rec){ { 0 } }) == 1 && s < 2 * SLOTS; s++)
		pushed++;
	tap_ok(pushed == SLOTS, "full: exactly %u single pushes fit (%u did)", SLOTS, pushed);
	tap_ok(ring_count(&r) == (int)SLOTS && ring_space(&r) == 0 && ring_push_batch(&r, in, 4) == 0,
	       "full: count %u, space 0, a batch pushes 0", SLOTS);
	while ((n = ring_pop_batch(&r, out, 5)) > 0)
		popped += (unsigned)n;
	tap_ok(popped == SLOTS && ring_count(&r) == 0, "drained in batches of 5: %u records", popped);

	/* A batch bigger than the room: only what fits goes in, in order. */
	for (unsigned i = 0; i < SLOTS + 8; i++)
		in[i] = make_rec(1000 + i);
	n = ring_push_batch(&r, in, 10);
	tap_ok(n == 10 && ring_push_batch(&r, in + 10, SLOTS) == (int)SLOTS - 10 &&
		       ring_push_batch(&r, in + SLOTS, 8) == 0,
	       "a batch of %u into %u free slots pushes %u", SLOTS, SLOTS - 10, SLOTS - 10);
	n = ring_pop_batch(&r, out, SLOTS + 8);
	for (int i = 0; i < n; i++)
		order &= rec_is(&out[i], 1000 + (uint64_t)i);
	tap_ok(n == (int)SLOTS && order, "popped back whole and in order (%d records)", n);
	guarded_unmap(&g);
}

/* Random pushes and pops across the 2^32 wrap of both counters. */
static void test_wrap(void)
{
	const uint32_t slots = 8, start = UINT32_MAX - 20;
	struct guarded g;
	struct ring setup, prod, cons;
	struct ring_rec buf[16];
	uint64_t next_in = 0, next_out = 0;
	bool ok = true, counts = true;
	void *mem = guarded_map(&g, ring_mem_size(slots));

	ring_init(&setup, mem, g.size, slots);
	setup.hdr->head = start;
	setup.hdr->tail = start;
	if (ring_attach(&prod, mem, g.size) < 0 || ring_attach(&cons, mem, g.size) < 0)
		tap_bail("attach after moving the counters");
	srand(1);
	for (int round = 0; round < 400; round++) {
		unsigned k = (unsigned)rand() % 12;
		int n;

		for (unsigned i = 0; i < k; i++)
			buf[i] = make_rec(next_in + i);
		n = ring_push_batch(&prod, buf, k);
		next_in += (uint64_t)(n > 0 ? n : 0);
		counts &= n >= 0 && ring_count(&cons) == (int)(next_in - next_out) &&
			  ring_space(&prod) == (int)(slots - (next_in - next_out));
		n = ring_pop_batch(&cons, buf, (unsigned)rand() % 12);
		for (int i = 0; i < n; i++)
			ok &= rec_is(&buf[i], next_out + (uint64_t)i);
		next_out += (uint64_t)(n > 0 ? n : 0);
		ok &= n >= 0;
	}
	tap_ok(setup.hdr->tail < start && setup.hdr->head < start && next_out > 1000,
	       "counters wrapped past 2^32 (head %u, tail %u, %llu records)", setup.hdr->head, setup.hdr->tail,
	       (unsigned long long)next_out);
	tap_ok(ok, "across the wrap: every record popped whole and in order");
	tap_ok(counts, "across the wrap: count and space right after every push");
	guarded_unmap(&g);
}

static void test_wake_flag(void)
{
	struct guarded g;
	struct ring r;
	struct ring_rec rec = make_rec(7), out;
	uint32_t *waiting;
	void *mem = guarded_map(&g, ring_mem_size(SLOTS));

	ring_init(&r, mem, g.size, SLOTS);
	waiting = &r.hdr->consumer_waiting;
	tap_ok(!ring_needs_wake(&r), "producer: no wake-up needed while the consumer is not waiting");
	tap_ok(ring_prepare_wait(&r) && *waiting == 1, "consumer: empty ring, may sleep, flag set");
	ring_push(&r, &rec);
	tap_ok(ring_needs_wake(&r) && *waiting == 0, "producer: wake-up needed after a push, flag cleared");
	tap_ok(!ring_needs_wake(&r), "producer: one wake-up per sleep (second call false)");
	tap_ok(!ring_prepare_wait(&r) && *waiting == 0, "consumer: non-empty ring, no sleep, flag left clear");
	ring_pop_batch(&r, &out, 1);
	tap_ok(ring_prepare_wait(&r), "consumer: empty again, may sleep");
	ring_cancel_wait(&r);
	tap_ok(*waiting == 0 && !ring_needs_wake(&r), "consumer: cancel_wait clears the flag, no wake-up then");
	guarded_unmap(&g);
}

/* A consumer that wakes by itself at 1000: records due at 1000 or later
 * need no eventfd, sooner ones (or ones due now, 0) do. */
static void test_self_wake(void)
{
	struct guarded g;
	struct ring r;
	struct ring_rec rec = make_rec(9), out;
	uint32_t *waiting;
	void *mem = guarded_map(&g, ring_mem_size(SLOTS));

	ring_init(&r, mem, g.size, SLOTS);
	waiting = &r.hdr->consumer_waiting;
	tap_ok(ring_prepare_wait_until(&r, 1000) && *waiting == 2 && r.hdr->wake_at == 1000,
	       "self-wake: empty ring, may sleep, flag 2 and the time set");
	ring_push(&r, &rec);
	tap_ok(!ring_needs_wake_by(&r, 1000) && *waiting == 2, "self-wake: a record due at the wake-up needs no eventfd, flag kept");
	tap_ok(!ring_needs_wake_by(&r, 5000) && *waiting == 2, "self-wake: a record due later needs none");
	tap_ok(ring_needs_wake_by(&r, 999) && *waiting == 0, "self-wake: a record due sooner needs the eventfd, flag cleared");
	tap_ok(!ring_needs_wake_by(&r, 0), "self-wake: one wake-up per sleep");
	ring_pop_batch(&r, &out, 1);
	tap_ok(ring_prepare_wait_until(&r, 1000), "self-wake: empty again, may sleep");
	ring_push(&r, &rec);
	tap_ok(ring_needs_wake(&r) && *waiting == 0, "self-wake: a producer that knows no due time wakes it");
	tap_ok(!ring_prepare_wait_until(&r, 1000) && *waiting == 0, "self-wake: non-empty ring, no sleep, flag left clear");
	ring_pop_batch(&r, &out, 1);
	tap_ok(ring_prepare_wait_until(&r, 1000), "self-wake: empty, may sleep");
	ring_cancel_wait(&r);
	ring_push(&r, &rec);
	tap_ok(*waiting == 0 && !ring_needs_wake_by(&r, 0), "self-wake: cancel_wait clears it, no wake-up then");
	guarded_unmap(&g);
}

/* How many of the @n pages at @mem this process has mapped (present in
 * /proc/self/pagemap, bit 63), or -1 if it cannot tell. */
static int pages_present(const void *mem, size_t n)
{
	long page = sysconf(_SC_PAGESIZE);
	int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC), present = 0;

	if (fd < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		uint64_t e;
		off_t at = (off_t)(((uintptr_t)mem / (uintptr_t)page + i) * sizeof(e));

		if (pread(fd, &e, sizeof(e), at) != (ssize_t)sizeof(e)) {
			close(fd);
			return -1;
		}
		present += (int)(e >> 63);
	}
	close(fd);
	return present;
}

/* ring_prefault maps every page of a shared-memory ring (a memfd, as the
 * daemon's) into this process, and reads nothing outside it. */
static void test_prefault(void)
{
	const uint32_t slots = 4096;
	long page = sysconf(_SC_PAGESIZE);
	size_t size = ring_mem_size(slots), npages = (size + (size_t)page - 1) / (size_t)page;
	int fd = memfd_create("ring-prefault", MFD_CLOEXEC);
	struct guarded g;
	struct ring r;
	char *mem;
	int before, after;

	if (fd < 0 || ftruncate(fd, (off_t)(npages * (size_t)page)) < 0)
		tap_bail("memfd: %s", strerror(errno));
	mem = mmap(NULL, npages * (size_t)page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (mem == MAP_FAILED)
		tap_bail("mmap: %s", strerror(errno));
	ring_init(&r, mem, size, slots);
	before = pages_present(mem, npages);
	ring_prefault(&r);
	after = pages_present(mem, npages);
	if (before < 0 || after < 0) {
		tap_skip("ring_prefault: /proc/self/pagemap is not readable here");
	} else {
		tap_ok(before == 1 && after == (int)npages,
		       "ring_prefault: %d of %zu pages of a %u-slot ring mapped before (its header), %d after", before,
		       npages, slots, after);
	}
	munmap(mem, npages * (size_t)page);
	close(fd);
	/* At the very end of a mapping: a read past the ring would crash. */
	mem = guarded_map(&g, ring_mem_size(SLOTS));
	ring_init(&r, mem, g.size, SLOTS);
	ring_prefault(&r);
	tap_ok(ring_attach(&r, mem, g.size) == 0, "ring_prefault: reads within the ring only, changes nothing");
	guarded_unmap(&g);
}

/* A header a hostile or broken peer could hand us: each one refused. */
static void test_hostile_header(void)
{
	static const struct {
		const char *what;
		size_t off, width;
		uint32_t value;
	} bad[] = {
		{ "bad magic", offsetof(struct ring_hdr, magic), 4, 0x12345678 },
		{ "version 2", offsetof(struct ring_hdr, version), 2, 2 },
		{ "record size 64", offsetof(struct ring_hdr, rec_size), 2, 64 },
		{ "0 slots", offsetof(struct ring_hdr, slots), 4, 0 },
		{ "48 slots (not a power of two)", offsetof(struct ring_hdr, slots), 4, 48 },
		{ "2^31 slots", offsetof(struct ring_hdr, slots), 4, 1u << 31 },
		{ "1024 slots (bigger than the mapping)", offsetof(struct ring_hdr, slots), 4, 1024 },
		{ "tail a slot count + 1 ahead of head", offsetof(struct ring_hdr, tail), 4, SLOTS + 1 },
		{ "tail far ahead of head", offsetof(struct ring_hdr, tail), 4, 0x80000000u },
		{ "head ahead of tail", offsetof(struct ring_hdr, head), 4, 1 },
	};
	struct guarded g;
	struct ring r;
	char *mem = guarded_map(&g, ring_mem_size(SLOTS));

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint32_t v32 = bad[i].value;
		uint16_t v16 = (uint16_t)v32;

		ring_init(&r, mem, g.size, SLOTS);
		memcpy(mem + bad[i].off, bad[i].width == 2 ? (void *)&v16 : (void *)&v32, bad[i].width);
		tap_ok(ring_attach(&r, mem, g.size) == -EPROTO, "attach refuses %s with -EPROTO", bad[i].what);
	}
	ring_init(&r, mem, g.size, SLOTS);
	tap_ok(ring_attach(&r, mem, sizeof(struct ring_hdr) - 1) == -EPROTO,
	       "attach refuses a mapping smaller than the header");
	tap_ok(ring_attach(&r, mem, g.size - 1) == -EPROTO, "attach refuses a mapping one byte short of the slots");
	tap_ok(ring_attach(&r, mem, g.size) == 0, "attach accepts the untouched ring");
	guarded_unmap(&g);
}

/* A peer that rewrites the counters or the header while we run. */
static void test_hostile_runtime(void)
{
	struct guarded g;
	struct ring prod, cons;
	struct ring_rec buf[SLOTS];
	void *mem = guarded_map(&g, ring_mem_size(SLOTS));
	int n, total = 0;

	ring_init(&prod, mem, g.size, SLOTS);
	ring_attach(&cons, mem, g.size);
	prod.hdr->tail = 5 * SLOTS; /* a producer claiming 5 rings' worth */
	tap_ok(ring_count(&cons) == -EPROTO && ring_pop_batch(&cons, buf, SLOTS) == -EPROTO,
	       "consumer: tail beyond head + slots is -EPROTO (count and pop)");
	tap_ok(!ring_prepare_wait(&cons) && cons.hdr->consumer_waiting == 0,
	       "consumer: no sleep on a broken ring (the next pop reports it)");
	prod.hdr->tail = 0;

	cons.hdr->head = 3; /* a consumer claiming records never pushed */
	tap_ok(ring_space(&prod) == -EPROTO, "producer: head ahead of tail is -EPROTO");
	cons.hdr->head = 0;

	/* Slot count rewritten after attach: we keep indexing with ours (the
	 * guard page would catch a write past the real slots). */
	prod.hdr->slots = RING_MAX_SLOTS;
	while ((n = ring_push_batch(&prod, buf, 7)) > 0)
		total += n;
	tap_ok(n == 0 && total == (int)SLOTS, "producer: a rewritten slot count changes nothing (%d pushed)", total);
	cons.hdr->head = (uint32_t)-(int)SLOTS; /* head moved back a whole ring */
	tap_ok(ring_space(&prod) == -EPROTO && ring_push_batch(&prod, buf, 1) == -EPROTO,
	       "producer: head moved back by a ring is -EPROTO");
	guarded_unmap(&g);
}

int main(void)
{
	tap_plan(53);
	test_sizes();
	test_init_args();
	test_empty_full_fifo();
	test_wrap();
	test_wake_flag();
	test_self_wake();
	test_prefault();
	test_hostile_header();
	test_hostile_runtime();
	return tap_done();
}
