/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A raw control-socket client for tests/ctlsock/ctlsock.sh: it speaks the
 * protocol with ctl_encode/ctl_decode and the rings of shared/timerrec.h
 * directly (no libclockd timer API), against the daemon at $CLOCKD_SOCKET.
 *
 *   rawclient hello        HELLO: HELLO_ACK with 1 + 2 * ncpus descriptors,
 *                          the memfd sealed and of timer_shm_size
 *   rawclient fire         ARM on the socket: a FIRE record in the ring
 *   rawclient malformed    every bad message gets an ERROR or a close,
 *                          and another client is still served
 *   rawclient rate         round trips beyond the quota: EAGAIN errors,
 *                          and another client is unaffected meanwhile
 *   rawclient maxclients N N connections, then one more: EDQUOT
 *   rawclient arm N        HELLO, arm N far timers, print "armed", sleep
 *   rawclient reserve      RESERVE against max_timers_per_user 10 and
 *                          client_max_timers 8 (the daemon's options):
 *                          what is granted, refused with EAGAIN, given
 *                          back, freed with a client that goes, and that
 *                          ids given back while armed stay counted
 *   rawclient selfwake     a consumer that says it wakes by itself
 *                          (ring_prepare_wait_until): no eventfd write for
 *                          a CLOCKD_MONOTONIC record due no sooner, one
 *                          for a record due sooner, and one for a
 *                          CLOCKD_REALTIME record (no due time compared)
 *
 * Exit 0 when the behaviour is as described, 1 otherwise; one line on
 * stdout says what was seen.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "shared/ctlproto.h"
#include "shared/ring.h"
#include "shared/timerrec.h"
#include "tests/ctlraw.h"

#define TIMEOUT_MS 10000
#define MAXFDS CTLRAW_MAXFDS
#define H_ARM_CPU_OFF (CTL_HDR_SIZE + 4)

static const char *sock_path;

static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	return 1;
}

static int conn_open(void)
{
	int fd = ctlraw_connect(sock_path);

	if (fd < 0) {
		fprintf(stderr, "connect %s: %s\n", sock_path, strerror(errno));
		exit(1);
	}
	return fd;
}

static int send_raw(int fd, const void *buf, size_t len)
{
	return send(fd, buf, len, MSG_NOSIGNAL) == (ssize_t)len ? 0 : -1;
}

static int send_msg(int fd, const struct ctl_msg *m)
{
	return ctlraw_send(fd, m, 0);
}

/* Receive one message (and its descriptors): 1 got one, 0 connection
 * closed, -1 timeout or error. */
static int recv_msg(int fd, struct ctl_msg *m, int *fds, unsigned *nfds)
{
	return ctlraw_recv(fd, TIMEOUT_MS, m, fds, nfds);
}

/* A request and its reply. */
static int ask(int fd, const struct ctl_msg *req, struct ctl_msg *rep, int *fds, unsigned *nfds)
{
	if (send_msg(fd, req) < 0)
		return -1;
	return recv_msg(fd, rep, fds, nfds);
}

struct client {
	int fd;
	struct ctl_hello_ack ack;
	int fds[MAXFDS];
	unsigned nfds;
	struct timer_shm *shm;
	size_t size;
};

static int client_hello(struct client *c, char *err, size_t errlen)
{
	struct ctl_msg req, rep;
	struct stat st;

	c->fd = conn_open();
	ctl_msg_init(&req, CTL_HELLO, 1);
	req.u.hello.min_version = 1;
	req.u.hello.max_version = 1;
	if (ask(c->fd, &req, &rep, c->fds, &c->nfds) != 1 || rep.type != CTL_HELLO_ACK) {
		snprintf(err, errlen, "HELLO: no HELLO_ACK (type %s: %s)", ctl_type_name(rep.type),
			 rep.type == CTL_ERROR ? rep.u.error.why : "");
		return -1;
	}
	c->ack = rep.u.hello_ack;
	if (c->nfds < 1 || fstat(c->fds[0], &st) < 0) {
		snprintf(err, errlen, "HELLO_ACK with %u descriptors", c->nfds);
		return -1;
	}
	c->size = (size_t)st.st_size;
	c->shm = mmap(NULL, c->size, PROT_READ | PROT_WRITE, MAP_SHARED, c->fds[0], 0);
	if (c->shm == MAP_FAILED) {
		snprintf(err, errlen, "mmap of the memfd: %s", strerror(errno));
		return -1;
	}
	return 0;
}

static int cmd_hello(void)
{
	struct client c;
	char err[200];
	int seals;
	size_t want;

	if (client_hello(&c, err, sizeof(err)) < 0)
		return fail("%s", err);
	seals = fcntl(c.fds[0], F_GET_SEALS);
	want = timer_shm_size(c.shm->ncpus, c.ack.ring_slots);
	if (c.shm->magic != TIMER_SHM_MAGIC || c.nfds != 1 + 2 * c.shm->ncpus)
		return fail("%u descriptors for %u served CPUs (magic %#" PRIx64 ")", c.nfds, c.shm->ncpus,
			    c.shm->magic);
	if (seals < 0 || !(seals & F_SEAL_SHRINK) || !(seals & F_SEAL_GROW))
		return fail("memfd seals %#x: not sealed against shrinking and growing", seals);
	if (c.size != want)
		return fail("memfd of %zu bytes, timer_shm_size says %zu", c.size, want);
	if (c.ack.ncpus != c.shm->cpu[c.shm->ncpus - 1] + 1)
		return fail("HELLO_ACK.ncpus %u, highest served CPU %u", c.ack.ncpus, c.shm->cpu[c.shm->ncpus - 1]);
	printf("HELLO_ACK: %u descriptors, %u CPUs served (ncpus %u), ring_slots %u, memfd %zu bytes, seals %#x\n",
	       c.nfds, c.shm->ncpus, c.ack.ncpus, c.ack.ring_slots, c.size, seals);
	return 0;
}

/* Wait for a FIRE of @timer_id in CPU pair @k's delivery ring. */
static int wait_fire(struct client *c, unsigned k, uint32_t timer_id, struct timerrec *out)
{
	size_t region = timer_shm_region(c->ack.ring_slots);
	struct ring r;
	struct pollfd pfd = { .fd = c->fds[2 + 2 * k], .events = POLLIN };

	if (ring_attach(&r, (char *)c->shm + TIMER_SHM_HDR + (2 * k + 1) * region, region) < 0)
		return -1;
	for (int rounds = 0; rounds < 100; rounds++) {
		struct ring_rec rec;
		uint64_t v;

		while (ring_pop_batch(&r, &rec, 1) == 1)
			if (timerrec_decode_deliv(&rec, out) == 0 && out->timer_id == timer_id)
				return 0;
		if (ring_prepare_wait(&r)) {
			if (poll(&pfd, 1, TIMEOUT_MS / 100) == 1 && read(pfd.fd, &v, sizeof(v)) < 0)
				return -1;
			ring_cancel_wait(&r);
		}
	}
	return -1;
}

static int cmd_fire(void)
{
	struct client c;
	struct ctl_msg req, rep;
	struct timerrec t;
	char err[200];

	if (client_hello(&c, err, sizeof(err)) < 0)
		return fail("%s", err);
	ctl_msg_init(&req, CTL_ARM, 77);
	req.u.arm = (struct ctl_arm){ .timer_id = 5, .cpu = c.shm->cpu[0], .clock = CTL_CLOCK_MONOTONIC,
				      .expires = 2000000 };
	if (ask(c.fd, &req, &rep, NULL, NULL) != 1 || rep.type != CTL_OK || rep.u.ok.timer_id != 5)
		return fail("ARM: no OK (%s %s)", ctl_type_name(rep.type),
			    rep.type == CTL_ERROR ? rep.u.error.why : "");
	if (wait_fire(&c, 0, 5, &t) < 0)
		return fail("no FIRE of timer 5 in CPU %u's delivery ring", c.shm->cpu[0]);
	if (t.op != TREC_FIRE || t.gen != 77)
		return fail("record op %#x gen %u for timer 5 (want FIRE, gen 77 = the ARM's seq)", t.op, t.gen);
	printf("ARM on the socket (CPU %u, 2 ms): FIRE of timer 5, gen %u, expires %" PRIu64 "\n",
	       c.shm->cpu[0], t.gen, t.expires);
	return 0;
}

/* ---- a consumer that wakes by itself ---- */

/* Arm @id on CPU pair 0 to fire once after 2 ms on @clock, with the
 * delivery ring announced as waiting until @wake_at, and wait for the
 * record. True in *@woken if the eventfd was written meanwhile. */
static int arm_announced(struct client *c, struct ring *r, uint32_t id, uint32_t clock, uint64_t wake_at,
			 bool *woken, char *err, size_t errlen)
{
	struct pollfd pfd = { .fd = c->fds[2], .events = POLLIN };
	struct ctl_msg req, rep;
	struct ring_rec rec;
	struct timerrec t;
	uint64_t v;
	int got = 0;

	/* A count left from before (a wake-up we did not sleep for). */
	if (poll(&pfd, 1, 0) == 1 && read(pfd.fd, &v, sizeof(v)) < 0) {
		snprintf(err, errlen, "timer %u: eventfd read: %s", id, strerror(errno));
		return -1;
	}
	if (!ring_prepare_wait_until(r, wake_at)) {
		snprintf(err, errlen, "timer %u: the ring is not empty before the arm", id);
		return -1;
	}
	ctl_msg_init(&req, CTL_ARM, id);
	req.u.arm = (struct ctl_arm){ .timer_id = id, .cpu = c->shm->cpu[0], .clock = clock, .expires = 2000000 };
	if (ask(c->fd, &req, &rep, NULL, NULL) != 1 || rep.type != CTL_OK) {
		snprintf(err, errlen, "timer %u: ARM: no OK (%s)", id, ctl_type_name(rep.type));
		return -1;
	}
	/* The record, whether or not we are woken for it (the daemon writes
	 * the eventfd in the same round as it pushes: 1 s after the record
	 * is more than enough even on a loaded machine). */
	for (int i = 0; i < TIMEOUT_MS && (got = ring_count(r)) == 0; i++)
		usleep(1000);
	*woken = poll(&pfd, 1, got ? 1000 : 0) == 1;
	if (*woken && read(pfd.fd, &v, sizeof(v)) < 0) {
		snprintf(err, errlen, "timer %u: eventfd read: %s", id, strerror(errno));
		return -1;
	}
	ring_cancel_wait(r);
	if (ring_pop_batch(r, &rec, 1) != 1 || timerrec_decode_deliv(&rec, &t) != 0 || t.timer_id != id ||
	    t.op != TREC_FIRE) {
		snprintf(err, errlen, "timer %u: no FIRE in the delivery ring within %d s", id, TIMEOUT_MS / 1000);
		return -1;
	}
	return 0;
}

static int cmd_selfwake(void)
{
	size_t region;
	struct client c;
	struct ring r;
	bool late, soon, real_late, real_soon;
	char err[200];

	if (client_hello(&c, err, sizeof(err)) < 0)
		return fail("%s", err);
	region = timer_shm_region(c.ack.ring_slots);
	if (ring_attach(&r, (char *)c.shm + TIMER_SHM_HDR + region, region) < 0)
		return fail("CPU %u's delivery ring does not attach", c.shm->cpu[0]);
	/* Waking at 1 ns, long past: by any record's expiry. A realtime
	 * record's expiry is compared on CLOCKD_MONOTONIC too. */
	if (arm_announced(&c, &r, 1, CTL_CLOCK_MONOTONIC, 1, &late, err, sizeof(err)) < 0 ||
	    arm_announced(&c, &r, 2, CTL_CLOCK_MONOTONIC, UINT64_MAX, &soon, err, sizeof(err)) < 0 ||
	    arm_announced(&c, &r, 3, CTL_CLOCK_REALTIME, 1, &real_late, err, sizeof(err)) < 0 ||
	    arm_announced(&c, &r, 4, CTL_CLOCK_REALTIME, UINT64_MAX, &real_soon, err, sizeof(err)) < 0)
		return fail("%s", err);
	if (late || !soon || real_late || !real_soon)
		return fail("eventfd written: %s for a monotonic record due after the self-wake (want no), %s for one "
			    "due before it (want yes), %s for a realtime record due after it (want no), %s for one due "
			    "before it (want yes)", late ? "yes" : "no", soon ? "yes" : "no", real_late ? "yes" : "no",
			    real_soon ? "yes" : "no");
	printf("self-wake announced: no eventfd write for a monotonic or realtime record due after it, one for a "
	       "record due before it on either clock\n");
	return 0;
}

/* ---- malformed messages ---- */

/* After sending @buf: an ERROR (with @want_err, 0 for any) or a close. */
static bool refused(const void *buf, size_t len, int want_err, bool hello_first, char *seen, size_t seenlen)
{
	struct client c;
	struct ctl_msg rep;
	int fd, rc;

	if (hello_first) {
		if (client_hello(&c, seen, seenlen) < 0)
			return false;
		fd = c.fd;
	} else {
		fd = conn_open();
	}
	if (send_raw(fd, buf, len) < 0) {
		snprintf(seen, seenlen, "send failed: %s", strerror(errno));
		close(fd);
		return false;
	}
	rc = recv_msg(fd, &rep, NULL, NULL);
	close(fd);
	if (rc == 0) {
		snprintf(seen, seenlen, "closed");
		return want_err == 0 || want_err == EPROTO;
	}
	if (rc < 0 || rep.type != CTL_ERROR) {
		snprintf(seen, seenlen, "%s", rc < 0 ? "no answer" : ctl_type_name(rep.type));
		return false;
	}
	snprintf(seen, seenlen, "ERROR %d %s", rep.u.error.errno_code, rep.u.error.why);
	return want_err == 0 || rep.u.error.errno_code == want_err;
}

static size_t valid_arm(unsigned char *buf)
{
	struct ctl_msg m;

	ctl_msg_init(&m, CTL_ARM, 3);
	m.u.arm = (struct ctl_arm){ .timer_id = 1, .cpu = 0, .clock = CTL_CLOCK_MONOTONIC, .expires = 1000000000 };
	return ctl_encode(&m, buf, CTL_MSG_MAX);
}

static bool still_served(void)
{
	struct ctl_msg req, rep;
	int fd = conn_open(), rc;

	ctl_msg_init(&req, CTL_CPU_STATS, 9);
	rc = ask(fd, &req, &rep, NULL, NULL);
	close(fd);
	return rc == 1 && rep.type == CTL_CPU_STATS_REPLY;
}

static int cmd_malformed(void)
{
	unsigned char arm[CTL_MSG_MAX], buf[4096];
	size_t n = valid_arm(arm), bad = 0;
	char seen[160];
	struct ctl_msg m;

	/* Every truncation of a valid ARM, after HELLO. */
	for (size_t k = 1; k < n; k++) {
		if (!refused(arm, k, 0, true, seen, sizeof(seen))) {
			printf("# truncated ARM of %zu bytes: %s\n", k, seen);
			bad++;
		}
	}
	/* Garbage, a reply type, oversized, before HELLO. */
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (unsigned char)(i * 37 + 11);
	if (!refused(buf, 64, EPROTO, true, seen, sizeof(seen)))
		printf("# garbage: %s\n", seen), bad++;
	ctl_msg_init(&m, CTL_OK, 4);
	if (!refused(buf, ctl_encode(&m, buf, sizeof(buf)), EPROTO, true, seen, sizeof(seen)))
		printf("# a reply type (OK): %s\n", seen), bad++;
	memcpy(buf, arm, n);
	buf[8] = 0;
	buf[9] = 0x10; /* header len 4096 */
	if (!refused(buf, 4096, EMSGSIZE, true, seen, sizeof(seen)))
		printf("# 4096 bytes: %s\n", seen), bad++;
	if (!refused(arm, n, ENOTCONN, false, seen, sizeof(seen)))
		printf("# ARM before HELLO: %s\n", seen), bad++;
	arm[H_ARM_CPU_OFF] = 0xff;
	if (!refused(arm, n, EINVAL, true, seen, sizeof(seen)))
		printf("# ARM.cpu 255: %s\n", seen), bad++;
	if (bad)
		return fail("%zu malformed messages were not refused", bad);
	if (!still_served())
		return fail("the daemon no longer serves a new client");
	printf("%zu truncations of ARM, garbage, a reply type, 4096 bytes, ARM before HELLO, a bad cpu: "
	       "all refused; a new client is served\n", n - 1);
	return 0;
}

/* ---- quotas ---- */

/*
 * 9 times the quota in round trips, as fast as they go: beyond the burst
 * they get EAGAIN (unless they took 8 s), and never reach the 10 times
 * that disconnects. Meanwhile another client, within its own quota, gets
 * every answer.
 */
static int cmd_rate(void)
{
	struct client c;
	struct ctl_msg req, rep;
	unsigned replies = 0, eagain = 0, other_ok = 0, other_asked = 0, total;
	char err[200];
	int other;

	if (client_hello(&c, err, sizeof(err)) < 0)
		return fail("%s", err);
	other = conn_open();
	total = 9u * c.ack.max_msgs_per_sec - 1; /* the HELLO counted */
	for (unsigned i = 0; i < total; i++) {
		ctl_msg_init(&req, CTL_STATS, i);
		if (ask(c.fd, &req, &rep, NULL, NULL) != 1)
			return fail("round trip %u: no answer (disconnected?)", i);
		if (rep.type == CTL_STATS_REPLY)
			replies++;
		else if (rep.type == CTL_ERROR && rep.u.error.errno_code == EAGAIN)
			eagain++;
		if (i % 10 == 0) {
			other_asked++;
			ctl_msg_init(&req, CTL_CPU_STATS, i);
			if (ask(other, &req, &rep, NULL, NULL) == 1 && rep.type == CTL_CPU_STATS_REPLY)
				other_ok++;
		}
	}
	if (eagain == 0 || replies == 0 || replies + eagain != total || other_ok != other_asked)
		return fail("%u replies, %u EAGAIN of %u; the other client: %u/%u answered", replies, eagain, total,
			    other_ok, other_asked);
	printf("quota %u/s: %u replies, %u EAGAIN; the other client got all %u answers\n",
	       c.ack.max_msgs_per_sec, replies, eagain, other_ok);
	return 0;
}

static int cmd_maxclients(unsigned n)
{
	struct ctl_msg req, rep;
	int fd, rc;

	for (unsigned i = 0; i < n; i++) {
		fd = conn_open();
		ctl_msg_init(&req, CTL_CPU_STATS, i);
		if (ask(fd, &req, &rep, NULL, NULL) != 1 || rep.type != CTL_CPU_STATS_REPLY)
			return fail("connection %u of %u not served", i + 1, n);
	}
	fd = conn_open();
	rc = recv_msg(fd, &rep, NULL, NULL);
	if (rc != 1 || rep.type != CTL_ERROR || rep.u.error.errno_code != EDQUOT)
		return fail("connection %u: %s", n + 1, rc == 1 ? ctl_type_name(rep.type) : "no ERROR");
	rc = recv_msg(fd, &rep, NULL, NULL);
	if (rc != 0)
		return fail("connection %u: not closed after EDQUOT", n + 1);
	printf("connection %u: ERROR EDQUOT \"%s\", then closed\n", n + 1, rep.u.error.why);
	return 0;
}

static int cmd_arm(unsigned n)
{
	struct client c;
	struct ctl_msg req, rep;
	char err[200];

	if (client_hello(&c, err, sizeof(err)) < 0)
		return fail("%s", err);
	for (unsigned i = 0; i < n; i++) {
		ctl_msg_init(&req, CTL_ARM, i);
		req.u.arm = (struct ctl_arm){ .timer_id = i, .cpu = c.shm->cpu[i % c.shm->ncpus],
					      .clock = CTL_CLOCK_MONOTONIC, .expires = 3600000000000ull };
		if (ask(c.fd, &req, &rep, NULL, NULL) != 1 || rep.type != CTL_OK)
			return fail("ARM %u: %s", i, ctl_type_name(rep.type));
	}
	printf("armed\n");
	fflush(stdout);
	for (;;)
		pause();
}

/* RESERVE @count on @fd: 0 (OK), the ERROR's errno, or -1 (no answer). */
static int reserve(int fd, int32_t count)
{
	struct ctl_msg req, rep;

	ctl_msg_init(&req, CTL_RESERVE, 7);
	req.u.reserve.count = count;
	if (ask(fd, &req, &rep, NULL, NULL) != 1)
		return -1;
	return rep.type == CTL_OK ? 0 : rep.type == CTL_ERROR ? rep.u.error.errno_code : -1;
}

/* The client's pending timers (STATS), or -1. */
static long long pending_of(int fd)
{
	struct ctl_msg req, rep;

	ctl_msg_init(&req, CTL_STATS, 8);
	if (ask(fd, &req, &rep, NULL, NULL) != 1 || rep.type != CTL_STATS_REPLY)
		return -1;
	return (long long)rep.u.stats_reply.pending;
}

#define EXPECT(what, got, want) \
	do { \
		int g_ = (got); \
		if (g_ != (want)) \
			return fail("%s: got %d (%s), want %d", what, g_, g_ > 0 ? strerror(g_) : "-", want); \
	} while (0)

static int cmd_reserve(void)
{
	struct client a, b;
	struct ctl_msg req, rep;
	char err[200];
	int fd = conn_open();
	long long p = -1;

	EXPECT("RESERVE before HELLO", reserve(fd, 1), ENOTCONN);
	close(fd);
	if (client_hello(&a, err, sizeof(err)) < 0 || client_hello(&b, err, sizeof(err)) < 0)
		return fail("%s", err);
	EXPECT("A: RESERVE 9, past its 8 ids", reserve(a.fd, 9), EAGAIN);
	EXPECT("A: RESERVE 6", reserve(a.fd, 6), 0);
	EXPECT("B: RESERVE 5, past the user's 10", reserve(b.fd, 5), EAGAIN);
	EXPECT("B: RESERVE 4", reserve(b.fd, 4), 0);
	EXPECT("B: RESERVE 1, the user's 10 all reserved", reserve(b.fd, 1), EAGAIN);
	EXPECT("A: gives back 3", reserve(a.fd, -3), 0);
	EXPECT("B: RESERVE 3 of them", reserve(b.fd, 3), 0);
	EXPECT("A: gives back 100, more than it holds (3)", reserve(a.fd, -100), 0);
	EXPECT("B: RESERVE 2 more, past its 8 ids", reserve(b.fd, 2), EAGAIN);
	EXPECT("B: gives back its 7", reserve(b.fd, -7), 0);
	/* Ids given back while their timers are armed stay counted. */
	EXPECT("A: RESERVE 8", reserve(a.fd, 8), 0);
	for (unsigned i = 0; i < 8; i++) {
		ctl_msg_init(&req, CTL_ARM, 100 + i);
		req.u.arm = (struct ctl_arm){ .timer_id = i, .cpu = a.shm->cpu[0], .clock = CTL_CLOCK_MONOTONIC,
					      .flags = CTL_ARM_RESERVED, .expires = 3600000000000ull };
		if (ask(a.fd, &req, &rep, NULL, NULL) != 1 || rep.type != CTL_OK)
			return fail("ARM %u: %s", i, ctl_type_name(rep.type));
	}
	for (int i = 0; i < 200 && (p = pending_of(a.fd)) != 8; i++)
		usleep(10000);
	if (p != 8)
		return fail("A's 8 ARMs on reserved ids: %lld pending, want 8", p);
	EXPECT("A: gives back its 8, all armed", reserve(a.fd, -8), 0);
	EXPECT("B: RESERVE 3: A's 8 armed timers still count", reserve(b.fd, 3), EAGAIN);
	EXPECT("B: RESERVE 2", reserve(b.fd, 2), 0);
	/* A client that goes takes its reservations and timers with it. */
	close(a.fd);
	for (int i = 0, r = EAGAIN; r != 0; i++) {
		if (i == 200)
			return fail("B: RESERVE 6 once A is gone: still refused after 2 s");
		r = reserve(b.fd, 6);
		if (r != 0 && r != EAGAIN)
			return fail("B: RESERVE 6 once A is gone: %d", r);
		if (r)
			usleep(10000);
	}
	printf("RESERVE: granted, refused with EAGAIN past the user's and the client's limits, given back, "
	       "freed with its client; ids given back while armed stay counted\n");
	return 0;
}

int main(int argc, char **argv)
{
	sock_path = getenv("CLOCKD_SOCKET");
	if (!sock_path || argc < 2)
		return fail("usage: CLOCKD_SOCKET=PATH rawclient hello|fire|malformed|rate|maxclients N|arm N|reserve|selfwake");
	if (strcmp(argv[1], "hello") == 0)
		return cmd_hello();
	if (strcmp(argv[1], "fire") == 0)
		return cmd_fire();
	if (strcmp(argv[1], "malformed") == 0)
		return cmd_malformed();
	if (strcmp(argv[1], "rate") == 0)
		return cmd_rate();
	if (strcmp(argv[1], "maxclients") == 0 && argc == 3)
		return cmd_maxclients((unsigned)atoi(argv[2]));
	if (strcmp(argv[1], "arm") == 0 && argc == 3)
		return cmd_arm((unsigned)atoi(argv[2]));
	if (strcmp(argv[1], "reserve") == 0)
		return cmd_reserve();
	if (strcmp(argv[1], "selfwake") == 0)
		return cmd_selfwake();
	return fail("unknown command %s", argv[1]);
}
