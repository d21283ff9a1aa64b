/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The shared-memory ring (src/shared/ring.c): records per second from a
 * producer thread to a consumer thread, each pinned to its own CPU, in
 * batches of 1, 16 and 256 records, three ways side by side:
 *  - busy:  the consumer polls the ring and never sleeps; no wake-up
 *           protocol at all (no fence, no flag, no system call);
 *  - wake:  the protocol as a daemon runs it: the consumer sleeps on the
 *           eventfd whenever it finds the ring empty, the producer checks
 *           the flag after every push and writes the eventfd when needed;
 *  - sleep: the worst case of the same: before each batch the producer
 *           waits until the consumer is asleep, so every batch costs one
 *           eventfd write, one wake-up and one read.
 * The issue asks for >= 1M arm+cancel per second per client: with one
 * record per arm and one per cancel, 2M records/s; the ratio to that is
 * printed beside each rate. Rounds are interleaved, each cell's best round
 * is its rate (noise only slows), the median beside it.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "shared/ring.h"
#include "tests/util.h"

#define SLOTS 1024u
#define ROUNDS 3
#define RECORDS 4000000ull    /* per round, busy and wake */
#define SLEEP_BATCHES 20000ull /* per round, sleep: one wake-up each */
#define TARGET_RECS 2e6        /* 1M arm+cancel/s, one record each */

enum mode { BUSY, WAKE, SLEEP, NMODES };
static const char *const mode_name[NMODES] = { "busy", "wake", "sleep" };

struct run {
	struct ring prod, cons;
	int efd;
	enum mode mode;
	unsigned batch;
	uint64_t n;
	int cpu[2];             /* producer, consumer; -1: not pinned */
	uint64_t wrong, sleeps;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void pin(int cpu)
{
	if (cpu >= 0)
		tu_pin(cpu);
}

/* Spin until the consumer has drained the ring and announced its sleep. */
static void wait_asleep(struct run *r)
{
	while (__atomic_load_n(&r->prod.hdr->head, __ATOMIC_ACQUIRE) != r->prod.tail ||
	       !__atomic_load_n(&r->prod.hdr->consumer_waiting, __ATOMIC_RELAXED))
		;
}

static void *produce(void *arg)
{
	struct run *r = arg;
	struct ring_rec buf[256] = { { { 0 } } };
	uint64_t seq = 0;

	pin(r->cpu[0]);
	while (seq < r->n) {
		unsigned k = r->n - seq < r->batch ? (unsigned)(r->n - seq) : r->batch, off = 0;

		if (r->mode == SLEEP)
			wait_asleep(r);
		for (unsigned i = 0; i < k; i++)
			buf[i].word[0] = seq + i;
		while (off < k) {
			int got = ring_push_batch(&r->prod, buf + off, k - off);

			if (got < 0)
				return NULL;
			off += (unsigned)got;
			if (got > 0 && r->mode != BUSY && ring_needs_wake(&r->prod))
				eventfd_write(r->efd, 1);
		}
		seq += k;
	}
	return NULL;
}

static void consumer_sleep(struct run *r)
{
	struct pollfd pfd = { .fd = r->efd, .events = POLLIN };
	eventfd_t v;

	r->sleeps++;
	poll(&pfd, 1, -1);
	ring_cancel_wait(&r->cons);
	eventfd_read(r->efd, &v);
}

static void *consume(void *arg)
{
	struct run *r = arg;
	struct ring_rec buf[256];
	uint64_t seq = 0;

	pin(r->cpu[1]);
	while (seq < r->n) {
		int got = ring_pop_batch(&r->cons, buf, 256);

		if (got < 0)
			return NULL;
		for (int i = 0; i < got; i++)
			r->wrong += buf[i].word[0] != seq + (uint64_t)i;
		seq += (uint64_t)got;
		if (got == 0 && r->mode != BUSY && ring_prepare_wait(&r->cons))
			consumer_sleep(r);
	}
	return NULL;
}

/* One round: records per second, or -1 if a record went astray. */
static double run_once(struct run *r, void *mem, enum mode mode, unsigned batch)
{
	pthread_t tp, tc;
	double t0, t;

	if (ring_init(&r->cons, mem, ring_mem_size(SLOTS), SLOTS) < 0 ||
	    ring_attach(&r->prod, mem, ring_mem_size(SLOTS)) < 0)
		return -1;
	r->mode = mode;
	r->batch = batch;
	r->n = mode == SLEEP ? SLEEP_BATCHES * batch : RECORDS;
	r->wrong = r->sleeps = 0;
	t0 = now_s();
	pthread_create(&tc, NULL, consume, r);
	pthread_create(&tp, NULL, produce, r);
	pthread_join(tp, NULL);
	pthread_join(tc, NULL);
	t = now_s() - t0;
	if (r->wrong || r->cons.head != r->prod.tail || r->cons.head != (uint32_t)r->n)
		return -1;
	return (double)r->n / t;
}

/* The first two CPUs this process may run on, or -1 -1. */
static void pick_cpus(int cpu[2])
{
	if (tu_cpus(cpu, 2) < 2)
		cpu[0] = cpu[1] = -1;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(void)
{
	static const unsigned batches[] = { 1, 16, 256 };
	double rate[NMODES][ROUNDS];
	struct run r = { .efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC) };
	void *mem = mmap(NULL, ring_mem_size(SLOTS), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (r.efd < 0 || mem == MAP_FAILED) {
		fprintf(stderr, "bench-ring: %s\n", strerror(errno));
		return 1;
	}
	pick_cpus(r.cpu);
	if (r.cpu[0] < 0)
		printf("  (fewer than 2 CPUs allowed: threads not pinned)\n");
	printf("Mrecords/s producer (CPU %d) -> consumer (CPU %d), %u slots, best of %d rounds (median), "
	       "[ratio to 2M rec/s = 1M arm+cancel/s]:\n",
	       r.cpu[0], r.cpu[1], SLOTS, ROUNDS);
	printf("  %5s  %-27s  %-27s  %-27s\n", "batch", "busy (no wake path)", "wake (sleeps when empty)",
	       "sleep (asleep every batch)");
	for (size_t b = 0; b < sizeof(batches) / sizeof(batches[0]); b++) {
		printf("  %5u", batches[b]);
		for (int round = 0; round < ROUNDS; round++)
			for (int m = 0; m < NMODES; m++)
				if ((rate[m][round] = run_once(&r, mem, (enum mode)m, batches[b])) < 0) {
					fprintf(stderr, "bench-ring: records lost or out of order (%s, batch %u)\n",
						mode_name[m], batches[b]);
					return 1;
				}
		for (int m = 0; m < NMODES; m++) {
			qsort(rate[m], ROUNDS, sizeof(double), cmp_double);
			printf("  %7.2f (%7.2f) [%6.2fx] ", rate[m][ROUNDS - 1] / 1e6, rate[m][ROUNDS / 2] / 1e6,
			       rate[m][ROUNDS - 1] / TARGET_RECS);
		}
		printf("\n");
	}
	return 0;
}
