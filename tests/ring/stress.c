/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The ring between two threads, then between two processes (a forked
 * producer that maps the memfd on its own): 1e7 sequence-numbered records
 * (RING_STRESS_RECORDS) in random batch sizes, some bigger than the ring,
 * through a small ring whose counters start just below 2^32, with the
 * eventfd wake-up: the consumer sleeps whenever the ring is empty.
 * Checks: every record arrives whole, in order, once; nothing is left
 * over; no side hits the deadline (a lost wake-up leaves the consumer
 * asleep on a non-empty ring, and the producer waiting for it).
 * Every FORCE_EVERY batches the producer waits until the consumer has
 * drained the ring and announced its sleep, then pushes: a lost wake-up
 * there stops both sides until the deadline. (Without these forced sleeps
 * only a lost wake-up of the very last batch would hang: any later push
 * finds the flag still set and wakes the consumer.)
 * Usage: stress [threads|fork|both] (default both).
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "shared/ring.h"
#include "tests/tap.h"

#define SLOTS 256u
#define MAX_BATCH 300u        /* > SLOTS: some pushes are partial */
#define FORCE_EVERY 512       /* batches between forced sleeps */
#define DEADLINE_S 120        /* a hang, not a slow machine */
#define START (UINT32_MAX - 1000u)
#define RESULTS_SIZE 4096     /* the memfd: results page, then the ring */

/* The producer's results and the stop flag, in the shared memfd. */
struct results {
	uint32_t stop;        /* either side gave up: the other stops too */
	int32_t err;          /* producer: 0, -EPROTO or -ETIMEDOUT */
	uint64_t pushed, batches, wakes, forced, forced_woken;
};

struct side {
	struct ring r;
	struct results *res;
	int efd;
	uint64_t n, rng;
	struct timespec deadline;
	/* consumer */
	int err;
	uint64_t popped, bad, sleeps;
};

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
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

static int64_t ms_left(const struct timespec *deadline)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (int64_t)(deadline->tv_sec - now.tv_sec) * 1000 + (deadline->tv_nsec - now.tv_nsec) / 1000000;
}

static bool stopped(const struct side *s)
{
	return __atomic_load_n(&s->res->stop, __ATOMIC_RELAXED) != 0;
}

/* Give up, and wake the consumer so it sees it. */
static void stop_all(struct side *s)
{
	__atomic_store_n(&s->res->stop, 1, __ATOMIC_RELAXED);
	eventfd_write(s->efd, 1);
}

/* Producer: wait until every record is consumed and the consumer has
 * announced its sleep. The acquire on head orders the consumer's last
 * ring_cancel_wait before our load of the flag, so a 1 seen here comes
 * from a ring_prepare_wait that finds the ring empty: it will sleep. */
static int wait_consumer_asleep(struct side *s)
{
	while (__atomic_load_n(&s->r.hdr->head, __ATOMIC_ACQUIRE) != s->r.tail ||
	       !__atomic_load_n(&s->r.hdr->consumer_waiting, __ATOMIC_RELAXED)) {
		if (stopped(s) || ms_left(&s->deadline) < 0)
			return -ETIMEDOUT;
		sched_yield();
	}
	return 0;
}

/* Producer: push @k records from @buf, waking the consumer after every
 * push that published some. @forced: the consumer was seen asleep; count
 * whether the first push found it so. */
static int push_all(struct side *s, const struct ring_rec *buf, unsigned k, bool forced)
{
	unsigned off = 0;

	while (off < k) {
		int got = ring_push_batch(&s->r, buf + off, k - off);

		if (got < 0)
			return got;
		if (got == 0) {
			if (stopped(s) || ms_left(&s->deadline) < 0)
				return -ETIMEDOUT;
			sched_yield();
			continue;
		}
		if (ring_needs_wake(&s->r)) {
			eventfd_write(s->efd, 1);
			s->res->wakes++;
			s->res->forced_woken += forced && off == 0;
		}
		off += (unsigned)got;
	}
	return 0;
}

static void *produce(void *arg)
{
	struct side *s = arg;
	struct ring_rec buf[MAX_BATCH];
	struct results *res = s->res;
	int err = 0;

	while (res->pushed < s->n && !err) {
		unsigned k = 1 + (unsigned)(rnd(&s->rng) % MAX_BATCH);
		bool forced = ++res->batches % FORCE_EVERY == 0;

		if (k > s->n - res->pushed)
			k = (unsigned)(s->n - res->pushed);
		if (forced && (err = wait_consumer_asleep(s)) < 0)
			break;
		res->forced += forced;
		for (unsigned i = 0; i < k; i++)
			buf[i] = make_rec(res->pushed + i);
		if ((err = push_all(s, buf, k, forced)) == 0)
			res->pushed += k;
	}
	res->err = err;
	if (err)
		stop_all(s);
	return NULL;
}

/* Consumer: sleep on the eventfd until woken or the deadline. */
static int consumer_sleep(struct side *s)
{
	struct pollfd pfd = { .fd = s->efd, .events = POLLIN };
	eventfd_t v;
	int64_t left = ms_left(&s->deadline);
	int rc;

	s->sleeps++;
	do
		rc = poll(&pfd, 1, left > 0 ? (int)(left < INT32_MAX ? left : INT32_MAX) : 0);
	while (rc < 0 && errno == EINTR);
	ring_cancel_wait(&s->r);
	if (rc <= 0)
		return -ETIMEDOUT;
	eventfd_read(s->efd, &v); /* non-blocking: may find 0 after a spurious wake */
	return 0;
}

static void consume(struct side *s)
{
	struct ring_rec buf[MAX_BATCH];

	while (s->popped < s->n && !stopped(s)) {
		int got = ring_pop_batch(&s->r, buf, 1 + (unsigned)(rnd(&s->rng) % MAX_BATCH));

		if (got < 0) {
			s->err = got;
			break;
		}
		for (int i = 0; i < got; i++)
			s->bad += !rec_is(&buf[i], s->popped + (uint64_t)i);
		s->popped += (uint64_t)got;
		if (got == 0 && ring_prepare_wait(&s->r) && (s->err = consumer_sleep(s)) < 0)
			break;
	}
	if (s->err)
		stop_all(s);
}

/* The memfd: results page, then a ring with counters near 2^32. */
static void *make_shared(int *memfd, size_t *len)
{
	struct ring setup;
	void *p;

	*len = RESULTS_SIZE + ring_mem_size(SLOTS);
	*memfd = memfd_create("ring-stress", MFD_CLOEXEC);
	if (*memfd < 0 || ftruncate(*memfd, (off_t)*len) < 0)
		tap_bail("memfd: %s", strerror(errno));
	p = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_SHARED, *memfd, 0);
	if (p == MAP_FAILED)
		tap_bail("mmap: %s", strerror(errno));
	if (ring_init(&setup, (char *)p + RESULTS_SIZE, ring_mem_size(SLOTS), SLOTS) < 0)
		tap_bail("ring_init");
	setup.hdr->head = START;
	setup.hdr->tail = START;
	return p;
}

static void side_init(struct side *s, void *shared, size_t len, int efd, uint64_t n, uint64_t seed)
{
	memset(s, 0, sizeof(*s));
	if (ring_attach(&s->r, (char *)shared + RESULTS_SIZE, len - RESULTS_SIZE) < 0)
		tap_bail("ring_attach");
	s->res = shared;
	s->efd = efd;
	s->n = n;
	s->rng = seed;
	clock_gettime(CLOCK_MONOTONIC, &s->deadline);
	s->deadline.tv_sec += DEADLINE_S;
}

static void report(const char *how, const struct side *c, const struct results *res, uint64_t n)
{
	struct ring probe = c->r;
	int left = ring_count(&probe);

	tap_diag("%s: %" PRIu64 " batches, consumer slept %" PRIu64 " times, producer wrote the eventfd %" PRIu64
		 " times, %" PRIu64 " forced sleeps",
		 how, res->batches, c->sleeps, res->wakes, res->forced);
	tap_ok(c->err == 0 && res->err == 0, "%s: no -EPROTO, no side reached the %d s deadline (consumer %d, producer %d)",
	       how, DEADLINE_S, c->err, res->err);
	tap_ok(c->popped == n && res->pushed == n && c->bad == 0 && left == 0,
	       "%s: %" PRIu64 " of %" PRIu64 " records arrived whole and in order, none lost or repeated (%" PRIu64
	       " wrong, %d left over)",
	       how, c->popped, n, c->bad, left);
	/* A forced sleep the producer did not have to wake had already been
	 * ended by an earlier, spurious eventfd write (the producer won the
	 * flag from a ring_prepare_wait that then found records): allowed. A
	 * lost wake-up would have left the consumer asleep until the deadline
	 * instead (check 1). */
	tap_ok(res->forced > 0 && res->forced_woken > 0,
	       "%s: the wake-up path ran: %" PRIu64 " forced sleeps, %" PRIu64 " of them woken by the next push", how,
	       res->forced, res->forced_woken);
}

static void run_threads(uint64_t n, uint64_t seed)
{
	struct side prod, cons;
	pthread_t t;
	size_t len;
	int memfd, efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	void *shared = make_shared(&memfd, &len);

	if (efd < 0)
		tap_bail("eventfd: %s", strerror(errno));
	side_init(&prod, shared, len, efd, n, seed);
	side_init(&cons, shared, len, efd, n, seed * 3 + 1);
	if (pthread_create(&t, NULL, produce, &prod) != 0)
		tap_bail("pthread_create");
	consume(&cons);
	pthread_join(t, NULL);
	report("threads", &cons, prod.res, n);
	munmap(shared, len);
	close(memfd);
	close(efd);
}

/* The child maps the memfd itself (another address, as a real peer). */
static void child_produce(int memfd, size_t len, int efd, uint64_t n, uint64_t seed)
{
	struct side prod;
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);

	if (p == MAP_FAILED)
		_exit(2);
	side_init(&prod, p, len, efd, n, seed);
	produce(&prod);
	_exit(0);
}

static void run_fork(uint64_t n, uint64_t seed)
{
	struct side cons;
	size_t len;
	int memfd, status = 0, efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	void *shared = make_shared(&memfd, &len);
	pid_t pid;

	if (efd < 0)
		tap_bail("eventfd: %s", strerror(errno));
	side_init(&cons, shared, len, efd, n, seed * 3 + 1);
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		tap_bail("fork: %s", strerror(errno));
	if (pid == 0)
		child_produce(memfd, len, efd, n, seed);
	consume(&cons);
	if (cons.err)
		kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		tap_diag("producer process: wait status %#x", status);
	report("fork", &cons, cons.res, n);
	munmap(shared, len);
	close(memfd);
	close(efd);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "both";
	const char *env = getenv("RING_STRESS_RECORDS");
	uint64_t n = env ? strtoull(env, NULL, 10) : 10000000;
	uint64_t seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	bool threads = strcmp(mode, "fork") != 0, forked = strcmp(mode, "threads") != 0;

	seed |= 1; /* xorshift needs a non-zero state */
	tap_plan(3 * (threads + forked));
	tap_diag("%" PRIu64 " records, %u slots, batches 1..%u, seed %#" PRIx64, n, SLOTS, MAX_BATCH, seed);
	if (threads)
		run_threads(n, seed);
	if (forked)
		run_fork(n, seed);
	return tap_done();
}
