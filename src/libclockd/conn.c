/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The connection to the daemon's control socket, for timers: made at the
 * first timer call, HELLO then HELLO_ACK with the memfd and eventfds
 * (shared/timerrec.h, "Hand-over"); the submission rings (we produce) and
 * delivery rings (we consume); a delivery thread pinned to each CPU a timer
 * was armed on, or, after clockd_fd(), an epoll descriptor and
 * clockd_dispatch().
 *
 * Lifetime: a struct lib_conn is counted (the current-connection pointer
 * and each delivery thread hold a reference) and freed, with its mapping
 * and descriptors, by the last holder. Losing it (the daemon went away or
 * broke the protocol) detaches it at once under lib_tlock and wakes its
 * threads, which see c->dead and leave.
 *
 * Reconnecting (clockd.h, "Daemon restarts"): see reconnect_thread().
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "libclockd/internal.h"
#include "shared/ctlproto.h"
#include "shared/paths.h"
#include "shared/ring.h"
#include "shared/timerrec.h"

#define MAX_FDS (1 + 2 * TIMER_SHM_MAX_CPUS)
#define HELLO_TIMEOUT_S 5
/* A full submission ring with no progress for this long: the daemon is
 * stuck, the call fails with EAGAIN. */
#define FULL_WAIT_NS 1000000000LL
#define DELIVER_BATCH LIB_DELIVER_MAX
/* The default reconnect timeout: systemd restarts clockd 1 s after it
 * died (RestartSec=1s in clockd.service) and a daemon takes well under a
 * second to serve; 5 s leaves room for a loaded machine. */
#define RECONNECT_DEFAULT_MS 5000u
#define RECONNECT_MAX_SLEEP_MS 50

struct lib_cpu {
	int cpu;
	int sub_efd, deliv_efd;
	int deliv_ep; /* its delivery thread's epoll descriptor, or -1 */
	struct ring sub, deliv;
	bool served;     /* a delivery thread was started */
	bool prefaulted; /* its rings are mapped in (ring_prefault) */
};

struct lib_conn {
	int sock;
	void *map;
	size_t maplen;
	unsigned n;                 /* ring pairs */
	int8_t index[TIMER_SHM_MAX_CPUS]; /* CPU -> pair, -1 */
	struct lib_cpu pair[TIMER_SHM_MAX_CPUS];
	int refs;                   /* under lib_tlock */
	bool dead;                  /* under lib_tlock */
	uint32_t max_timers;        /* its HELLO_ACK's */
	uint32_t reserved;          /* ids reserved for ids_claimed (RESERVE) */
	uint32_t seq;               /* of its last request */
	bool no_reserve;            /* its daemon does not know RESERVE */
};

static const struct lib_conn_ops *ops; /* the timer table's (lib_conn_get) */
static struct lib_conn *cur;
static bool lost_report;  /* the next arming call says ECONNRESET */
static bool reconnecting; /* lost, timers kept until lost_at + timeout */
static bool reconnector;  /* the reconnect thread runs */
static int64_t lost_at;
static uint32_t reconnect_ms = RECONNECT_DEFAULT_MS;
static bool timers_used;  /* a timer call was made: clockd_fd() is too late */
static int epoll_fd = -1; /* clockd_fd() mode */
static pthread_mutex_t dispatch_lock = PTHREAD_MUTEX_INITIALIZER;

static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void efd_signal(int fd)
{
	uint64_t one = 1;

	/* A full counter (never in practice) still wakes the reader. */
	if (write(fd, &one, sizeof(one)) < 0)
		return;
}

static void close_fds(int *fds, int n)
{
	for (int i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

static void conn_free(struct lib_conn *c)
{
	for (unsigned k = 0; k < c->n; k++) {
		close(c->pair[k].sub_efd);
		close(c->pair[k].deliv_efd);
		if (c->pair[k].deliv_ep >= 0)
			close(c->pair[k].deliv_ep);
	}
	if (c->map)
		munmap(c->map, c->maplen);
	if (c->sock >= 0)
		close(c->sock);
	free(c);
}

/* With lib_tlock held. */
static void conn_put(struct lib_conn *c)
{
	if (--c->refs == 0)
		conn_free(c);
}

/* $CLOCKD_SOCKET, else the socket beside the page ($CLOCKD_SHM or the
 * default page: CLOCKD_DEFAULT_SOCKET). */
int lib_socket_path(struct sockaddr_un *sa)
{
	const char *p = getenv("CLOCKD_SOCKET");

	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (!p || !*p)
		return socket_beside_page(lib_page_path(), sa->sun_path, sizeof(sa->sun_path)) < 0
			       ? -ENAMETOOLONG
			       : 0;
	if (strlen(p) >= sizeof(sa->sun_path))
		return -ENAMETOOLONG;
	strcpy(sa->sun_path, p);
	return 0;
}

static int send_hello(int sock)
{
	unsigned char buf[CTL_MSG_MAX];
	struct ctl_msg m;
	size_t len;

	ctl_msg_init(&m, CTL_HELLO, 1);
	m.u.hello.min_version = CTL_VERSION;
	m.u.hello.max_version = CTL_VERSION;
	len = ctl_encode(&m, buf, sizeof(buf));
	if (send(sock, buf, len, MSG_NOSIGNAL) != (ssize_t)len)
		return -errno;
	return 0;
}

/* Receive HELLO_ACK (or ERROR) and its descriptors into @fds. Returns
 * how many descriptors came, or -errno with none left open. */
static int recv_ack(int sock, struct ctl_hello_ack *ack, int *fds)
{
	unsigned char buf[CTL_MSG_MAX];
	union {
		char b[CMSG_SPACE(MAX_FDS * sizeof(int))];
		struct cmsghdr align;
	} cbuf;
	struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf.b,
			     .msg_controllen = sizeof(cbuf.b) };
	struct ctl_msg m;
	ssize_t len;
	int nfds = 0;

	len = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	/* Closed by the daemon with our HELLO unread (refused at accept):
	 * the reset comes first, then the ERROR it sent saying why. */
	if (len < 0 && errno == ECONNRESET) {
		len = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
		if (len < 0)
			return -ECONNRESET;
	}
	if (len < 0)
		return errno == EAGAIN ? -ETIMEDOUT : errno == EPIPE ? -ECONNRESET : -errno;
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
		int got = (int)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		for (int i = 0; i < got; i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
			if (nfds < (int)MAX_FDS)
				fds[nfds++] = fd;
			else
				close(fd);
		}
	}
	if (len == 0) {
		close_fds(fds, nfds);
		return -ECONNRESET;
	}
	if ((mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) || ctl_decode(buf, (size_t)len, NULL, &m, NULL, 0) < 0)
		goto err_proto;
	/* A quota of the daemon's (too many clients) is a resource limit:
	 * EAGAIN, as POSIX has timer_create and timer_settime say. */
	if (m.type == CTL_ERROR && nfds == 0)
		return m.u.error.errno_code == EDQUOT ? -EAGAIN : -m.u.error.errno_code;
	if (m.type != CTL_HELLO_ACK || m.u.hello_ack.version != CTL_VERSION)
		goto err_proto;
	*ack = m.u.hello_ack;
	return nfds;
err_proto:
	close_fds(fds, nfds);
	return -EPROTO;
}

/* Check the header of the mapped memfd against the HELLO_ACK and the
 * descriptor count; the daemon wrote it before sending. */
static int check_shm(const struct timer_shm *h, size_t maplen, const struct ctl_hello_ack *ack, int nfds)
{
	uint64_t seen = 0;

	if (h->magic != TIMER_SHM_MAGIC || h->version != TIMER_SHM_VERSION)
		return -EPROTO;
	if (h->ncpus == 0 || h->ncpus > TIMER_SHM_MAX_CPUS || nfds != 1 + 2 * (int)h->ncpus)
		return -EPROTO;
	if (h->ring_slots != ack->ring_slots || h->region != timer_shm_region(h->ring_slots) ||
	    h->region == 0 || timer_shm_size(h->ncpus, h->ring_slots) > maplen)
		return -EPROTO;
	for (unsigned k = 0; k < h->ncpus; k++) {
		if (h->cpu[k] >= TIMER_SHM_MAX_CPUS || h->cpu[k] >= ack->ncpus || (seen >> h->cpu[k] & 1))
			return -EPROTO;
		seen |= 1ull << h->cpu[k];
	}
	return 0;
}

static int map_shm(struct lib_conn *c, int memfd)
{
	struct stat st;

	if (fstat(memfd, &st) < 0)
		return -errno;
	if (st.st_size < (off_t)TIMER_SHM_HDR)
		return -EPROTO;
	c->maplen = (size_t)st.st_size;
	c->map = mmap(NULL, c->maplen, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
	if (c->map == MAP_FAILED) {
		c->map = NULL;
		return -errno;
	}
	return 0;
}

/* Take the ring pairs: copy the header once (the daemon's word, read now),
 * attach each ring within its region. */
static int attach_rings(struct lib_conn *c, const struct ctl_hello_ack *ack, const int *fds, int nfds)
{
	struct timer_shm h;
	int err;

	memcpy(&h, c->map, sizeof(h));
	err = check_shm(&h, c->maplen, ack, nfds);
	if (err < 0)
		return err;
	c->n = h.ncpus;
	for (unsigned k = 0; k < c->n; k++) {
		struct lib_cpu *p = &c->pair[k];
		char *base = (char *)c->map + TIMER_SHM_HDR + 2 * (size_t)k * h.region;

		p->cpu = (int)h.cpu[k];
		p->sub_efd = fds[1 + 2 * k];
		p->deliv_efd = fds[2 + 2 * k];
		p->deliv_ep = -1;
		c->index[p->cpu] = (int8_t)k;
		if (ring_attach(&p->sub, base, h.region) < 0 || ring_attach(&p->deliv, base + h.region, h.region) < 0)
			return -EPROTO;
	}
	return 0;
}

/* In clockd_fd() mode: watch every delivery eventfd and the socket. The
 * consumer announces that it waits (ring.h), so the daemon's next record
 * makes the eventfd, and the epoll descriptor, readable. */
static int watch_conn(struct lib_conn *c)
{
	struct epoll_event ev = { .events = EPOLLIN };

	for (unsigned k = 0; k < c->n; k++) {
		ev.data.u32 = k;
		if (epoll_ctl(epoll_fd, EPOLL_CTL_ADD, c->pair[k].deliv_efd, &ev) < 0)
			return -errno;
		ring_prepare_wait(&c->pair[k].deliv);
	}
	ev.events = EPOLLRDHUP;
	ev.data.u32 = UINT32_MAX;
	if (epoll_ctl(epoll_fd, EPOLL_CTL_ADD, c->sock, &ev) < 0)
		return -errno;
	return 0;
}

/* @c's socket, connected to the daemon's control socket at @sa. */
static int conn_connect(struct lib_conn *c, const struct sockaddr_un *sa)
{
	struct timeval tv = { .tv_sec = HELLO_TIMEOUT_S };

	c->sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (c->sock < 0)
		return -errno;
	setsockopt(c->sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(c->sock, (const struct sockaddr *)sa, sizeof(*sa)) < 0)
		return -errno;
	return 0;
}

/* HELLO, and what HELLO_ACK hands over: the shared memory mapped, the
 * rings attached (the eventfds then belong to @c). */
static int conn_hello(struct lib_conn *c, struct ctl_hello_ack *ack)
{
	int fds[MAX_FDS], nfds, err;

	/* A HELLO that cannot be sent (the daemon refused us and closed) may
	 * still have an ERROR saying why waiting. */
	err = send_hello(c->sock);
	if (err < 0 && err != -EPIPE && err != -ECONNRESET)
		return err;
	nfds = recv_ack(c->sock, ack, fds);
	if (nfds < 0)
		return nfds;
	err = nfds < 3 ? -EPROTO : map_shm(c, fds[0]);
	if (err == 0)
		err = attach_rings(c, ack, fds, nfds);
	if (err < 0) {
		close_fds(fds, nfds);
		c->n = 0;
		return err;
	}
	close(fds[0]); /* the mapping keeps the memory */
	return 0;
}

/* With lib_tlock held: no daemon came back in time; every timer stops
 * being pending. */
static void give_up(void)
{
	reconnecting = false;
	ops->table_drop();
	lost_report = true;
}

static int64_t reconnect_deadline(void)
{
	return lost_at + (int64_t)reconnect_ms * 1000000;
}

/* A connection to the daemon, HELLO answered: no lock needed (nothing
 * shared is touched), so the reconnect thread dials without lib_tlock. */
static int conn_dial(struct lib_conn **out, struct ctl_hello_ack *ack)
{
	struct sockaddr_un sa;
	struct lib_conn *c;
	int err;

	err = lib_socket_path(&sa);
	if (err < 0)
		return err;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	memset(c->index, -1, sizeof(c->index));
	c->refs = 1;
	err = conn_connect(c, &sa);
	if (err == 0)
		err = conn_hello(c, ack);
	if (err < 0) {
		conn_free(c);
		return err;
	}
	*out = c;
	return 0;
}

/* With lib_tlock held: make the dialled @c the connection, and arm the
 * timers kept pending on it. 0, or -errno with @c freed. */
static int conn_install(struct lib_conn *c, const struct ctl_hello_ack *ack)
{
	unsigned lost = 0;
	int err = 0;

	if (epoll_fd >= 0)
		err = watch_conn(c);
	if (err == 0)
		err = ops->table_reset(ack->max_timers, &lost);
	if (err < 0) {
		conn_free(c);
		return err;
	}
	cur = c;
	reconnecting = false;
	c->max_timers = ack->max_timers;
	/* The POSIX timers' ids, again: refused (a newcomer took the user's
	 * quota meanwhile), the re-arms are still let through for a while
	 * after the daemon's start (CTL_ARM_REARM). */
	(void)lib_conn_cover(c);
	lost += ops->table_rearm(c);
	/* Timers the new daemon would not take (its quota) are lost: say so
	 * as a lost connection does. */
	if (lost)
		lost_report = true;
	return 0;
}

/* With lib_tlock held: connect now. 0 or -errno. */
static int conn_make(void)
{
	struct ctl_hello_ack ack = { 0 };
	struct lib_conn *c;
	int err;

	err = conn_dial(&c, &ack);
	return err < 0 ? err : conn_install(c, &ack);
}

struct lib_conn *lib_conn_current(void)
{
	return cur;
}

bool lib_conn_reconnecting(void)
{
	return reconnecting;
}

struct lib_conn *lib_conn_get(const struct lib_conn_ops *table, int *err)
{
	int e;

	ops = table;
	timers_used = true;
	if (lost_report) {
		lost_report = false;
		*err = ECONNRESET;
		return NULL;
	}
	if (cur)
		return cur;
	e = conn_make();
	if (e < 0 && reconnecting && mono_ns() >= reconnect_deadline()) {
		give_up(); /* the reconnect thread's work, if it could not start */
		lost_report = false;
		*err = ECONNRESET;
		return NULL;
	}
	if (e < 0) {
		/* A daemon that hung up during HELLO with no word why (one
		 * dying) did not take us: ECONNRESET says timers were lost. */
		if (e == -ECONNRESET)
			e = reconnecting ? -ENOTCONN : -ECONNREFUSED;
		/* No answer within 5 s: a daemon that cannot serve us for now
		 * (EAGAIN, as POSIX has for the timer calls; not ETIMEDOUT). */
		if (e == -ETIMEDOUT)
			e = -EAGAIN;
		*err = -e;
		return NULL;
	}
	if (!cur) {
		/* Lost again while arming the kept timers: reconnecting
		 * (ENOTCONN), or, with a timeout of 0, they are lost. */
		*err = reconnecting ? ENOTCONN : ECONNRESET;
		lost_report = reconnecting && lost_report;
		return NULL;
	}
	return cur;
}

int lib_conn_index(const struct lib_conn *c, int cpu)
{
	if (cpu < 0) {
		cpu = sched_getcpu();
		if (cpu < 0 || cpu >= (int)TIMER_SHM_MAX_CPUS || c->index[cpu] < 0)
			return 0; /* pairs are in CPU order: 0 is the lowest */
	}
	if (cpu >= (int)TIMER_SHM_MAX_CPUS)
		return -1;
	return c->index[cpu];
}

int lib_conn_cpu(const struct lib_conn *c, int k)
{
	return c->pair[k].cpu;
}

static bool socket_gone(int sock)
{
	struct pollfd pfd = { .fd = sock, .events = POLLRDHUP };

	return poll(&pfd, 1, 0) > 0 && (pfd.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

int lib_conn_submit(struct lib_conn *c, int k, const struct timerrec *t)
{
	struct lib_cpu *p = &c->pair[k];
	struct ring_rec rec;
	int64_t deadline = 0;
	int n;

	timerrec_encode(t, &rec);
	/* The pair's first record: its rings are mapped in now, by the
	 * thread that starts using the CPU, not a page at a time by the
	 * delivery thread (measured: a 1 ms timer's callback 10-15 us late
	 * every 128th expiry for the first 4096). */
	if (!p->prefaulted) {
		ring_prefault(&p->sub);
		ring_prefault(&p->deliv);
		p->prefaulted = true;
	}
	for (;;) {
		n = ring_push(&p->sub, &rec);
		if (n < 0) {
			lib_conn_lose(c);
			return -ECONNRESET;
		}
		if (n == 1)
			break;
		/* Full: the daemon may be asleep on a ring we filled; wake it,
		 * then give it time, but not for ever. */
		efd_signal(p->sub_efd);
		if (deadline == 0)
			deadline = mono_ns() + FULL_WAIT_NS;
		else if (mono_ns() > deadline)
			return -EAGAIN;
		sched_yield();
	}
	if (ring_needs_wake(&p->sub)) {
		efd_signal(p->sub_efd);
		/* The daemon slept: it may be gone, and with no delivery
		 * thread nobody else would notice. A busy daemon costs no
		 * look. */
		if (socket_gone(c->sock)) {
			lib_conn_lose(c);
			return -ECONNRESET;
		}
	}
	return 0;
}

/* ---- reserved timer ids ---- */

/*
 * A POSIX timer claims one of max_timers_per_user at timer_create, where
 * POSIX has EAGAIN for it: the connection reserves ids on the daemon
 * (RESERVE) to cover ids_claimed, asking for up to RESERVE_CHUNK more at
 * once (as many as are claimed, doubling), and gives back what is spare
 * beyond twice that. The POSIX timers' ARMs are marked CTL_ARM_RESERVED
 * and are then never refused for the quota.
 */
#define RESERVE_CHUNK 64
static uint32_t ids_claimed; /* POSIX timers alive (lib_tlock) */

/* The daemon's answer to a request of seq @seq: 0, or -errno. An ERROR
 * with seq 0 is the daemon's refusal of a message it did not read (its
 * message rate): the answer too. */
static int recv_reply(struct lib_conn *c, uint32_t seq)
{
	unsigned char buf[CTL_MSG_MAX];
	int64_t end = mono_ns() + (int64_t)HELLO_TIMEOUT_S * 1000000000;
	struct ctl_msg m;
	ssize_t len;

	for (;;) {
		len = recv(c->sock, buf, sizeof(buf), 0);
		if (len < 0 && errno == EINTR && mono_ns() < end)
			continue;
		if (len < 0)
			return errno == EAGAIN ? -ETIMEDOUT : -errno;
		if (len == 0)
			return -ECONNRESET;
		if (ctl_decode(buf, (size_t)len, NULL, &m, NULL, 0) < 0)
			return -EPROTO;
		if (m.seq == seq && m.type == CTL_OK)
			return 0;
		if (m.type == CTL_ERROR && (m.seq == seq || m.seq == 0))
			return -m.u.error.errno_code;
		/* A late answer to a request that timed out: not ours. */
	}
}

static int reserve_call(struct lib_conn *c, int32_t count)
{
	unsigned char buf[CTL_MSG_MAX];
	struct ctl_msg m;
	size_t len;
	int err;

	ctl_msg_init(&m, CTL_RESERVE, ++c->seq);
	m.u.reserve.count = count;
	len = ctl_encode(&m, buf, sizeof(buf));
	if (len == 0)
		return -EINVAL;
	if (send(c->sock, buf, len, MSG_NOSIGNAL) != (ssize_t)len)
		return -errno;
	err = recv_reply(c, m.seq);
	if (err == 0 && count > 0)
		c->reserved += (uint32_t)count;
	else if (err == 0)
		c->reserved -= (uint32_t)-count;
	/* A daemon from before RESERVE: the timers count when armed. */
	if (err == -EPROTO || err == -EINVAL || err == -ENOTCONN)
		c->no_reserve = true;
	return err;
}

int lib_conn_cover(struct lib_conn *c)
{
	uint32_t need, ask;
	int err;

	if (c->no_reserve || c->reserved >= ids_claimed)
		return 0;
	need = ids_claimed - c->reserved;
	if (need > c->max_timers - c->reserved)
		return -EAGAIN;
	ask = ids_claimed < RESERVE_CHUNK ? ids_claimed : RESERVE_CHUNK;
	if (ask < need)
		ask = need;
	if (ask > c->max_timers - c->reserved)
		ask = c->max_timers - c->reserved;
	err = reserve_call(c, (int32_t)ask);
	if (err == -EAGAIN && ask > need)
		err = reserve_call(c, (int32_t)need);
	return err;
}

int lib_conn_claim(void)
{
	int err;

	ids_claimed++;
	if (!cur)
		return 0; /* the arm that connects reserves it */
	err = lib_conn_cover(cur);
	if (err == -EAGAIN) {
		ids_claimed--;
		return err;
	}
	return 0;
}

void lib_conn_unclaim(void)
{
	uint32_t keep, spare;

	if (ids_claimed == 0) /* a parent's timer, in a child */
		return;
	ids_claimed--;
	if (!cur || cur->no_reserve)
		return;
	keep = ids_claimed == 0 ? 1 : ids_claimed < RESERVE_CHUNK ? ids_claimed : RESERVE_CHUNK;
	spare = cur->reserved > ids_claimed ? cur->reserved - ids_claimed : 0;
	if (spare > 2 * keep)
		(void)reserve_call(cur, -(int32_t)(spare - keep));
}

/* ---- reconnecting ---- */

/* With lib_tlock held: still reconnecting, within the timeout. False
 * when an arming call connected meanwhile, or the timeout passed (then
 * give_up()). */
static bool reconnect_in_time(void)
{
	if (!reconnecting || cur)
		return false;
	if (mono_ns() >= reconnect_deadline()) {
		give_up();
		return false;
	}
	return true;
}

/* With lib_tlock held: a connection is still wanted. False when an arming
 * call connected meanwhile, or no timer is pending any more (the next
 * arming call connects, as the first one did: a connection with no timer
 * has no thread to see it go). */
static bool reconnect_wanted(void)
{
	if (!reconnecting || cur)
		return false;
	if (!ops->table_any_pending()) {
		reconnecting = false;
		return false;
	}
	return true;
}

/* With lib_tlock held, dropped meanwhile: sleep @ms, at most up to the
 * deadline. */
static void reconnect_pause(int64_t ms)
{
	int64_t left = reconnect_deadline() - mono_ns();
	struct timespec ts;

	if (left > ms * 1000000)
		left = ms * 1000000;
	if (left < 0)
		left = 0;
	ts.tv_sec = (time_t)(left / 1000000000);
	ts.tv_nsec = (long)(left % 1000000000);
	lib_tlock_unlock();
	nanosleep(&ts, NULL);
	lib_tlock_lock();
}

/* With lib_tlock held, dropped while dialling (a daemon slow to answer
 * HELLO blocks no timer call): true once connected, the pending timers
 * armed again at their absolute expiry (conn_install()). */
static bool reconnect_try(void)
{
	struct ctl_hello_ack ack = { 0 };
	struct lib_conn *c;
	int err;

	lib_tlock_unlock();
	err = conn_dial(&c, &ack);
	lib_tlock_lock();
	if (err == 0 && (!reconnecting || cur)) {
		conn_free(c); /* an arming call was quicker */
		return true;
	}
	return err == 0 && conn_install(c, &ack) == 0;
}

/*
 * The connection was lost: the timers stay pending while this thread
 * tries the socket again, 1 ms after the loss and then at doubling
 * intervals of at most RECONNECT_MAX_SLEEP_MS, until a daemon takes us
 * or the reconnect timeout passes. An arming call meanwhile tries too
 * (lib_conn_get()). After the timeout the next arming call reports
 * ECONNRESET once (lost_report), and the one after connects again.
 */
static void *reconnect_thread(void *arg)
{
	int64_t sleep_ms = 1;

	(void)arg;
	lib_tlock_thread_masked();
	lib_tlock_lock();
	while (reconnect_in_time()) {
		reconnect_pause(sleep_ms);
		if (!reconnect_wanted() || reconnect_try())
			break;
		sleep_ms = sleep_ms * 2 > RECONNECT_MAX_SLEEP_MS ? RECONNECT_MAX_SLEEP_MS : sleep_ms * 2;
	}
	reconnector = false;
	lib_tlock_unlock();
	return NULL;
}

/* With lib_tlock held: start reconnecting (the timers stay pending). */
static void reconnect_start(void)
{
	pthread_attr_t attr;
	sigset_t all, old;
	pthread_t th;
	int err;

	lost_at = mono_ns();
	reconnecting = true;
	if (reconnect_ms == 0) {
		give_up();
		return;
	}
	if (reconnector)
		return; /* it sees the new deadline */
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&th, &attr, reconnect_thread, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	/* Without the thread the next arming call reconnects, or finds the
	 * timeout passed. */
	if (err == 0)
		reconnector = true;
}

void lib_conn_lose(struct lib_conn *c)
{
	if (c != cur || c->dead)
		return;
	c->dead = true;
	cur = NULL;
	/* The daemon sees us go (if it lives); our threads wake and leave. */
	shutdown(c->sock, SHUT_RDWR);
	for (unsigned k = 0; k < c->n; k++)
		efd_signal(c->pair[k].deliv_efd);
	lib_tlock_broadcast();
	conn_put(c);
	reconnect_start();
}

/* Pop and run everything in pair @k's delivery ring. Returns the
 * callbacks run, or -1 if the connection was lost. */
static int drain(struct lib_conn *c, unsigned k)
{
	struct ring_rec recs[DELIVER_BATCH];
	int n, total = 0;

	for (;;) {
		n = ring_pop_batch(&c->pair[k].deliv, recs, DELIVER_BATCH);
		if (n > 0)
			n = ops->deliver(c, recs, n);
		else if (n == 0)
			return total;
		if (n < 0) {
			lib_tlock_lock();
			lib_conn_lose(c);
			lib_tlock_unlock();
			return -1;
		}
		total += n;
	}
}

/* Wait up to @timeout_ms for the eventfd @efd (-1: none) or a hang-up of
 * the socket; reset the eventfd if it was readable (the daemon's
 * descriptor may be blocking: read only what poll saw). True on hang-up. */
static bool wait_efd(int sock, int timeout_ms, int efd)
{
	struct pollfd pfd[2] = { { .fd = sock, .events = POLLRDHUP }, { .fd = efd, .events = POLLIN } };
	uint64_t v;

	if (poll(pfd, 2, timeout_ms) < 0)
		return false;
	if ((pfd[1].revents & POLLIN) && read(efd, &v, sizeof(v)) < 0)
		return false;
	return pfd[0].revents & (POLLRDHUP | POLLHUP | POLLERR);
}

/*
 * A delivery thread's sleep: one epoll_wait on the socket (hang-up) and
 * the delivery eventfd, the eventfd edge-triggered, so that it is never
 * read (one system call a wake-up, not poll's two: measured, the read
 * was one in four of the thread's per expiry). Every write is an edge,
 * and the daemon writes only after we announced the wait (ring.h). The
 * count is never reset: 2^64 - 2 writes to saturate it. -1 if the epoll
 * descriptor cannot be made: then poll and read.
 */
static int deliv_watch(int sock, int efd)
{
	struct epoll_event hup = { .events = EPOLLRDHUP, .data.u32 = 0 };
	struct epoll_event in = { .events = EPOLLIN | EPOLLET, .data.u32 = 1 };
	int ep = epoll_create1(EPOLL_CLOEXEC);

	if (ep >= 0 && (epoll_ctl(ep, EPOLL_CTL_ADD, sock, &hup) < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, efd, &in) < 0)) {
		close(ep);
		ep = -1;
	}
	return ep;
}

/* Sleep until a record or a hang-up, or for @timeout_ns if not negative:
 * true on hang-up. With a timeout on a kernel without epoll_pwait2 (5.11),
 * clears *@timed and returns at once. */
static bool deliv_wait(int ep, int sock, int efd, int64_t timeout_ns, bool *timed)
{
	struct timespec ts = { (time_t)(timeout_ns / 1000000000), (long)(timeout_ns % 1000000000) };
	struct epoll_event ev[2];
	int n;

	if (ep < 0)
		return wait_efd(sock, -1, efd);
	if (timeout_ns < 0) {
		n = epoll_wait(ep, ev, 2, -1);
	} else {
		n = epoll_pwait2(ep, ev, 2, &ts, NULL);
		if (n < 0 && errno == ENOSYS)
			*timed = false;
	}
	for (int i = 0; i < n; i++)
		if (ev[i].data.u32 == 0 && (ev[i].events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)))
			return true;
	return false;
}

/*
 * A SCHED_OTHER delivery thread wakes by its own timeout just before the
 * next expiry it expects (lib_conn_expect) and tells the daemon so
 * (ring_prepare_wait_until), which then spares its eventfd for records
 * due no sooner. Traced beside a busy loop (6.18, EEVDF): a fair thread
 * woken by the daemon's SCHED_FIFO base waited for the next tick in 1.7 %
 * of the wake-ups (the pick when the base sleeps is not a wake-up
 * preemption), one woken by a timer interrupt in 0.14 %. Its record is
 * there when it wakes: the base hands it over timer_lead_other_ns early.
 * SELF_WAKE_EARLY_NS early, for the drain before the callback (the rest
 * is read, not slept: lib_wait_asleep). Not further than
 * SELF_WAKE_MAX_NS ahead: the timeout runs on the kernel's clock, and
 * CLOCKD_MONOTONIC may differ from it in rate by the kernel's error (a
 * hardware reference).
 */
#define SELF_WAKE_EARLY_NS 2000
#define SELF_WAKE_MAX_NS 20000000

static LIB_THREAD int64_t expect_ns = INT64_MAX;

/*
 * An epoll timeout is a range whatever the timer slack: the kernel lets a
 * fair thread's end up to 1/1000 of its length late, 1/200 with a
 * positive nice (select_estimate_accuracy); none for a real-time one.
 * Measured on 6.18 (p50, beside an idle-class loop): a 10 ms timeout
 * overslept 10 us more than a clock_nanosleep of 10 ms with 1 ns of
 * slack, a 20 ms one 20 us more. So the timeout asked is
 * shorter by what the kernel may add: it ends by the wake-up wanted at
 * the latest, and at most that much (20 us at SELF_WAKE_MAX_NS) early,
 * still after the daemon's lead handed the record over. The divisor is
 * the thread's nice at its start (short_slice).
 */
static LIB_THREAD int64_t slack_div = 1000;

void lib_conn_expect(int64_t at)
{
	if (at - SELF_WAKE_EARLY_NS < expect_ns)
		expect_ns = at - SELF_WAKE_EARLY_NS;
}

/* The timeout to the wake-up before the expected expiry, or -1 (none,
 * past, too far). */
static int64_t self_wake_in(void)
{
	struct timespec ts;
	int64_t left;

	if (expect_ns == INT64_MAX || clockd_clock_gettime(CLOCKD_MONOTONIC, &ts) != 0)
		return -1;
	left = expect_ns - ((int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec - lib_timens_mono_ns());
	if (left <= 0 || left > SELF_WAKE_MAX_NS)
		return -1;
	return left * slack_div / (slack_div + 1);
}

struct thread_arg {
	struct lib_conn *c;
	unsigned k;
};

/*
 * A SCHED_OTHER delivery thread asks the kernel (6.12 and later) for the
 * shortest time slice, DELIVERY_SLICE_NS, as a latency-sensitive fair
 * task does: its wake-up then preempts a busy loop unless that one is
 * in its last 0.1 ms (measured beside one: p99 12-55 us in every
 * repetition, against 0.2-0.6 ms in one run in three with the default
 * slice). Its share of the CPU is the same; older kernels ignore it.
 * The other attributes (nice, reset-on-fork) are kept.
 */
#define DELIVERY_SLICE_NS 100000

struct sched_attr_v1 {
	uint32_t size, policy;
	uint64_t flags;
	int32_t nice;
	uint32_t priority;
	uint64_t runtime, deadline, period;
	uint32_t util_min, util_max;
};

static void short_slice(void)
{
	struct sched_attr_v1 a;

	memset(&a, 0, sizeof(a));
	if (syscall(SYS_sched_getattr, 0, &a, sizeof(a), 0) != 0 || a.policy != SCHED_OTHER)
		return;
	slack_div = a.nice > 0 ? 200 : 1000;
	a.size = sizeof(a);
	a.flags &= 0x01; /* SCHED_FLAG_RESET_ON_FORK */
	a.runtime = DELIVERY_SLICE_NS;
	(void)syscall(SYS_sched_setattr, 0, &a, 0);
}

/* Pair k's delivery thread, pinned to its CPU. Sleeps on the delivery
 * eventfd and the socket (whose hang-up means the daemon is gone). */
/*
 * CPU hotplug: when its CPU goes offline the kernel moves the thread and
 * widens its affinity for good. A callback for CPU n never runs
 * elsewhere: off its CPU the thread pins itself again, and while that
 * fails (the CPU is away) it runs nothing and retries every
 * HOTPLUG_RETRY_MS (the callbacks run late, on their CPU). Checked before
 * each drain (sched_getcpu, no system call) and against the affinity
 * (widened, the thread may wake on its CPU and later be moved): after a
 * sleep that follows a drain that ended off the CPU (the thread moved),
 * and otherwise at most every AFFINITY_CHECK_NS, not at every wake-up
 * (measured: one system call in four of the thread's per expiry).
 */
#define HOTPLUG_RETRY_MS 100
#define AFFINITY_CHECK_NS 10000000

struct cpu_check {
	int cpu;
	bool moved;	 /* the last drain ended off the CPU */
	int64_t next_ns; /* the next affinity check, after a sleep */
};

static bool on_cpu(struct cpu_check *k, bool slept)
{
	int cpu = k->cpu;
	cpu_set_t set;

	if (sched_getcpu() == cpu) {
		if (!slept || (!k->moved && mono_ns() < k->next_ns))
			return true;
		k->moved = false;
		k->next_ns = mono_ns() + AFFINITY_CHECK_NS;
		if (sched_getaffinity(0, sizeof(set), &set) < 0 || (CPU_COUNT(&set) == 1 && CPU_ISSET(cpu, &set)))
			return true;
	}
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0 && sched_getcpu() == cpu;
}

static void *deliver_thread(void *p)
{
	struct thread_arg a = *(struct thread_arg *)p;
	struct lib_cpu *pc = &a.c->pair[a.k];
	struct cpu_check check = { .cpu = pc->cpu };
	bool dead = false, slept = false, timed;
	int policy = sched_getscheduler(0);
	int64_t timeout;
	int ep = deliv_watch(a.c->sock, pc->deliv_efd);

	free(p);
	lib_tlock_thread_masked();
	/* Closed with the connection's other descriptors (conn_free), in a
	 * forked child too. */
	lib_tlock_lock();
	pc->deliv_ep = ep;
	lib_tlock_unlock();
	/* A SCHED_OTHER thread sleeps until its expected expiry (self_wake_in)
	 * and out what is left of the daemon's lead (ptimer.c): with no timer
	 * slack (and epoll's range allowed for), its wake-up is at the expiry,
	 * as a timerfd's (real-time threads have none anyway), and with a
	 * short slice (short_slice). */
	timed = !lib_policy_realtime(policy) && ep >= 0;
	if (!lib_policy_realtime(policy)) {
		(void)prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
		short_slice();
	}
	while (!dead) {
		if (!on_cpu(&check, slept)) {
			slept = true;
			if (wait_efd(a.c->sock, HOTPLUG_RETRY_MS, -1)) {
				lib_tlock_lock();
				lib_conn_lose(a.c);
				lib_tlock_unlock();
			}
			lib_tlock_lock();
			dead = a.c->dead;
			lib_tlock_unlock();
			continue;
		}
		slept = false;
		expect_ns = INT64_MAX;
		if (drain(a.c, a.k) < 0)
			break;
		if (sched_getcpu() != pc->cpu)
			check.moved = true;
		timeout = timed ? self_wake_in() : -1;
		if (timeout >= 0 ? ring_prepare_wait_until(&pc->deliv, (uint64_t)expect_ns) : ring_prepare_wait(&pc->deliv)) {
			slept = true;
			if (deliv_wait(ep, a.c->sock, pc->deliv_efd, timeout, &timed)) {
				lib_tlock_lock();
				lib_conn_lose(a.c);
				lib_tlock_unlock();
			}
			ring_cancel_wait(&pc->deliv);
		}
		lib_tlock_lock();
		dead = a.c->dead;
		lib_tlock_unlock();
	}
	lib_tlock_lock();
	conn_put(a.c);
	lib_tlock_unlock();
	return NULL;
}

/*
 * A delivery thread's scheduling: the policy and priority of the thread
 * arming the first timer on its pair (we run in that arm), so that a
 * SCHED_FIFO application's callbacks run SCHED_FIFO. Set explicitly rather
 * than inherited: SCHED_FIFO and SCHED_RR are copied, any other policy
 * (SCHED_OTHER, BATCH, IDLE, DEADLINE, which a thread cannot be created
 * with) gives SCHED_OTHER.
 */
static void sched_of_caller(pthread_attr_t *attr)
{
	struct sched_param sp = { .sched_priority = 0 };
	int policy;

	/* The kernel's word, not pthread_getschedparam(): glibc caches a
	 * thread's policy and misses a sched_setscheduler() since. */
	policy = sched_getscheduler(0);
	if (policy < 0 || sched_getparam(0, &sp) != 0 || !lib_policy_realtime(policy)) {
		policy = SCHED_OTHER;
		sp.sched_priority = 0;
	}
	pthread_attr_setinheritsched(attr, PTHREAD_EXPLICIT_SCHED);
	pthread_attr_setschedpolicy(attr, policy);
	pthread_attr_setschedparam(attr, &sp);
}

int lib_conn_serve(struct lib_conn *c, int k)
{
	struct lib_cpu *p = &c->pair[k];
	struct thread_arg *a;
	pthread_attr_t attr;
	sigset_t all, old;
	cpu_set_t set;
	pthread_t th;
	int err;

	if (p->served || epoll_fd >= 0)
		return 0;
	a = malloc(sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->c = c;
	a->k = (unsigned)k;
	CPU_ZERO(&set);
	CPU_SET(p->cpu, &set);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	sched_of_caller(&attr);
	/* Signals are the application's: our threads take none. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&th, &attr, deliver_thread, a);
	if (err == EPERM) {
		/* The caller's priority, no longer permitted (a limit lowered
		 * since it got it): SCHED_OTHER rather than no delivery. */
		pthread_attr_setschedpolicy(&attr, SCHED_OTHER);
		pthread_attr_setschedparam(&attr, &(struct sched_param){ .sched_priority = 0 });
		err = pthread_create(&th, &attr, deliver_thread, a);
	}
	if (err == EPERM) {
		/* Not even SCHED_OTHER: an unprivileged SCHED_IDLE caller may
		 * not leave SCHED_IDLE (RLIMIT_NICE). The caller's policy. */
		pthread_attr_setinheritsched(&attr, PTHREAD_INHERIT_SCHED);
		err = pthread_create(&th, &attr, deliver_thread, a);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (err) {
		free(a);
		return -err;
	}
	c->refs++;
	p->served = true;
	return 0;
}

/*
 * fork() without exec. The child has none of the parent's threads, and
 * POSIX says timers are not inherited: it closes its copies of the
 * parent's socket, eventfds and epoll instance and unmaps the rings (a
 * child holding the socket kept the daemon from seeing the parent exit,
 * and one sharing the epoll instance made the parent's loop spin), and
 * starts with no timer pending and no connection. A clockd_fd() loop
 * keeps its descriptor number, on an epoll instance of its own (dup3),
 * so that the child's loop goes on; the child of a thread-mode parent may
 * choose clockd_fd(). lib_tlock is held across fork() (prepare, parent)
 * so that the child's copy of the state is not half-updated.
 */
static void before_fork(void)
{
	lib_tlock_lock();
}

static void after_fork_parent(void)
{
	lib_tlock_unlock();
}

static void after_fork_child(void)
{
	lib_tlock_after_fork_child();
	pthread_mutex_init(&dispatch_lock, NULL);
	/* Our copies only: shutdown() would end the parent's connection
	 * too. A connection already lost but still held by a parent's
	 * thread keeps its descriptors here (the daemon saw it go). */
	if (cur)
		conn_free(cur);
	cur = NULL;
	if (epoll_fd >= 0) {
		int fresh = epoll_create1(EPOLL_CLOEXEC);

		if (fresh < 0 || dup3(fresh, epoll_fd, O_CLOEXEC) < 0) {
			/* Never the parent's instance: clockd_fd() makes one. */
			close(epoll_fd);
			epoll_fd = -1;
		}
		if (fresh >= 0)
			close(fresh);
	}
	timers_used = epoll_fd >= 0;
	if (ops)
		ops->table_drop();
	ids_claimed = 0;
	lost_report = false;
	reconnecting = false;
	reconnector = false;
}

static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

static void fork_init(void)
{
	pthread_atfork(before_fork, after_fork_parent, after_fork_child);
}

__attribute__((constructor)) static void conn_init(void)
{
	const char *e = getenv("CLOCKD_RECONNECT_MS");
	char *end;
	unsigned long v;

	pthread_once(&fork_once, fork_init);
	if (e && *e) {
		errno = 0;
		v = strtoul(e, &end, 10);
		if (!*end && errno == 0 && v <= UINT32_MAX)
			reconnect_ms = (uint32_t)v;
	}
}

CLOCKD_EXPORT int clockd_set_reconnect_timeout(uint32_t ms)
{
	lib_tlock_lock();
	reconnect_ms = ms;
	/* Disconnected now: the new bound counts from the loss. */
	if (reconnecting && !cur && ms == 0)
		give_up();
	lib_tlock_unlock();
	return 0;
}

CLOCKD_EXPORT int clockd_fd(void)
{
	int ret;

	lib_tlock_lock();
	if (epoll_fd < 0 && timers_used) {
		lib_tlock_unlock();
		errno = EBUSY;
		return -1;
	}
	if (epoll_fd < 0)
		epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	ret = epoll_fd;
	lib_tlock_unlock();
	return ret;
}

/* One pass over every delivery ring: reset the eventfd, run what is
 * queued, and announce the wait again so the next record wakes the loop. */
static int dispatch_conn(struct lib_conn *c)
{
	bool hup = false;
	int total = 0, n;

	for (unsigned k = 0; k < c->n; k++) {
		hup |= wait_efd(c->sock, 0, c->pair[k].deliv_efd);
		do {
			n = drain(c, k);
			if (n < 0)
				return total;
			total += n;
		} while (!ring_prepare_wait(&c->pair[k].deliv));
	}
	if (hup) {
		lib_tlock_lock();
		lib_conn_lose(c);
		lib_tlock_unlock();
	}
	return total;
}

CLOCKD_EXPORT int clockd_dispatch(void)
{
	struct lib_conn *c;
	int n;

	if (epoll_fd < 0) {
		errno = EINVAL;
		return -1;
	}
	/* One dispatcher at a time: a ring has one consumer. */
	if (pthread_mutex_trylock(&dispatch_lock) != 0)
		return 0;
	lib_tlock_lock();
	c = cur;
	if (c)
		c->refs++;
	lib_tlock_unlock();
	n = c ? dispatch_conn(c) : 0;
	if (c) {
		lib_tlock_lock();
		conn_put(c);
		lib_tlock_unlock();
	}
	pthread_mutex_unlock(&dispatch_lock);
	return n;
}
