/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The control socket server (see ctlserver.h for the contract).
 *
 * Everything here runs on the main thread, in its libevent loop: one
 * listening event, one read event per connection and a one-second sweep
 * (broken clients, the rate-abuse window). No state is shared with the
 * timer bases but through timerbase.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "clockd/ctlserver.h"
#include "clockd/safepath.h"
#include "shared/log.h"

#define SWEEP_SEC 1
#define SEC_NS 1000000000ll
#define QUIET_NS (10 * SEC_NS) /* no refusal or flood for this long ends a run */
#define ABUSE_FACTOR 10                /* times the quota, for a whole second */
#define ABUSE_WINDOW_NS 1000000000LL
#define MAX_HANDOVER_FDS (1 + 2 * TIMER_SHM_MAX_CPUS)

struct conn {
	struct ctlserver *srv;
	struct conn *prev, *next;
	int fd;
	struct event *ev;
	pid_t pid;
	uid_t uid;
	gid_t gid;
	struct tb_client *tbc;     /* after HELLO */
	double tokens;             /* the rate quota's bucket */
	int64_t refill_ns;         /* kernel CLOCK_MONOTONIC of the last refill */
	int64_t abuse_start_ns;    /* 0: no window open */
	uint64_t abuse_msgs;       /* messages since abuse_start_ns */
};

struct ctlserver {
	struct event_base *base;
	struct timer_bases *tb;
	struct ctlserver_params p;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	bool unlink_at_close;
	struct log_repeat accept_errors;
	/* Once a run each, ended by a sweep QUIET_NS after the last (a
	 * second for oom): */
	struct log_repeat refused;  /* clients beyond max_clients */
	struct log_repeat refused_user; /* beyond max_clients_per_user */
	struct log_repeat flooders; /* clients disconnected for a message flood */
	struct log_repeat oom;      /* allocations failing (main thread) */
	struct log_repeat client_errors; /* a timer client could not be made */
	int fd;
	struct event *ev_listen, *ev_sweep;
	struct conn *conns;
	uint32_t nconns;
	struct ctl_limits lim;
	bool accept_paused;        /* out of descriptors: not listening */
	uint64_t accept_pauses;    /* since the last "accepting again" */
	int spare_fd;              /* /dev/null, given up to refuse a client at EMFILE */
	uint64_t fd_refusals;      /* clients refused for lack of descriptors */
};

static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* ---- sending ---- */

/* One datagram, with @nfds descriptors if any. Never blocks: a full
 * socket buffer is the client's problem (-1, and it is dropped). */
static int send_msg(int fd, const struct ctl_msg *m, const int *fds, unsigned nfds)
{
	unsigned char buf[CTL_MSG_MAX];
	union {
		char raw[CMSG_SPACE(sizeof(int) * MAX_HANDOVER_FDS)];
		struct cmsghdr align;
	} ctrl;
	struct iovec iov = { .iov_base = buf };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	size_t n = ctl_encode(m, buf, sizeof(buf));

	if (n == 0) {
		log_warnx("control: cannot encode a %s (a bug)", ctl_type_name(m->type));
		errno = EINVAL;
		return -1;
	}
	iov.iov_len = n;
	if (nfds) {
		struct cmsghdr *c;

		memset(&ctrl, 0, sizeof(ctrl));
		mh.msg_control = ctrl.raw;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
	}
	return sendmsg(fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL) == (ssize_t)n ? 0 : -1;
}

/* An ERROR; @ref_type only when it is a request type (else 0). */
static int send_error(int fd, uint32_t seq, int err, uint16_t ref_type, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static int send_error(int fd, uint32_t seq, int err, uint16_t ref_type, const char *fmt, ...)
{
	struct ctl_msg m;
	va_list ap;

	ctl_msg_init(&m, CTL_ERROR, seq);
	m.u.error.errno_code = err;
	m.u.error.ref_type = ref_type & CTL_REPLY ? 0 : ref_type;
	if (ctl_msg_size(ref_type) == 0)
		m.u.error.ref_type = 0;
	va_start(ap, fmt);
	vsnprintf(m.u.error.why, sizeof(m.u.error.why), fmt, ap);
	va_end(ap);
	/* The decoder's reasons are printable; anything else is not sent. */
	for (char *c = m.u.error.why; *c; c++)
		if (*c < 0x20 || *c > 0x7e)
			*c = '?';
	return send_msg(fd, &m, NULL, 0);
}

/* ---- out of memory ---- */

/*
 * An allocation for a client failed: the client gets ENOMEM or its
 * connection closed. Logged once for a run of failures, which ends (and
 * says how many there were) at a sweep a second or more after the last:
 * a shortage that lets every other allocation through is two lines, not
 * one per connection.
 */
static void oom_note(struct ctlserver *s, pid_t pid, const char *what)
{
	log_repeat(&s->oom, LOG_WARNING, false,
		   "control: pid %ld: out of memory for %s; further failures are only counted", (long)pid,
		   what);
}

static void oom_sweep(struct ctlserver *s)
{
	log_repeat_end_quiet(&s->oom, SEC_NS, "control: allocations succeed again");
}

/* ---- connections ---- */

static void accept_resume(struct ctlserver *s);

static void conn_free(struct conn *c, const char *why)
{
	struct ctlserver *s = c->srv;

	if (c->tbc)
		log_debug("control: client pid %ld uid %lu gone: %s; its timers are cancelled", (long)c->pid,
			  (unsigned long)c->uid, why);
	else
		log_debug("control: connection of pid %ld uid %lu closed: %s", (long)c->pid,
			  (unsigned long)c->uid, why);
	if (c->tbc)
		tb_client_free(s->tb, c->tbc);
	event_free(c->ev);
	close(c->fd);
	if (c->prev)
		c->prev->next = c->next;
	else
		s->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	s->nconns--;
	free(c);
	/* A descriptor is free again. */
	accept_resume(s);
}

/* The rate quota: true if the message may be processed. Refills the
 * bucket by the time since the last message, capped at one second's
 * worth (the burst). */
static bool conn_take_token(struct conn *c, int64_t now)
{
	double rate = c->srv->p.max_msgs_per_sec;

	c->tokens += (double)(now - c->refill_ns) * rate / 1e9;
	if (c->tokens > rate)
		c->tokens = rate;
	c->refill_ns = now;
	if (c->tokens < 1.0)
		return false;
	c->tokens -= 1.0;
	return true;
}

/* A client over its quota: count its messages over windows of a second
 * opened by a refused message. True if it kept ABUSE_FACTOR times the
 * rate for a whole window: then it is to be dropped. */
static bool conn_abusive(struct conn *c, int64_t now, bool refused)
{
	if (c->abuse_start_ns == 0) {
		if (!refused)
			return false;
		c->abuse_start_ns = now;
		c->abuse_msgs = 0;
	}
	c->abuse_msgs++;
	if (now - c->abuse_start_ns < ABUSE_WINDOW_NS)
		return false;
	if (c->abuse_msgs >= (uint64_t)ABUSE_FACTOR * c->srv->p.max_msgs_per_sec)
		return true;
	c->abuse_start_ns = 0;
	return false;
}

/* ---- requests: each returns 0 to keep the connection, -1 to close it ---- */

/* The timer ids a HELLO gets: max_timers, at most max_timers_per_user.
 * Nothing is reserved: the bases count the timers a user's clients have
 * armed against max_timers_per_user (timerbase.h), so that each of
 * max_clients_per_user processes can arm some. */
static uint32_t client_timer_ids(const struct ctlserver *s)
{
	if (s->p.max_timers_per_user && s->p.max_timers_per_user < s->p.max_timers)
		return s->p.max_timers_per_user;
	return s->p.max_timers;
}

/*
 * Whether the client's threads run real time: its main thread's policy
 * (the process's, from SO_PEERCRED's pid), which libclockd's delivery
 * threads take from the thread that arms (real-time applications set it
 * for the process, chrt(1), or for the main thread before they start
 * others). Its lead is timer_lead_ns if so, timer_lead_other_ns if not.
 */
static bool client_realtime(pid_t pid)
{
	int policy = sched_getscheduler(pid);

	return policy == SCHED_FIFO || policy == SCHED_RR;
}

static int do_hello(struct conn *c, const struct ctl_msg *req)
{
	struct ctlserver *s = c->srv;
	uint32_t quota;
	int fds[MAX_HANDOVER_FDS];
	unsigned nfds = 0;
	struct ctl_msg m;
	int rc;

	if (c->tbc)
		return send_error(c->fd, req->seq, EALREADY, CTL_HELLO, "HELLO already done");
	quota = client_timer_ids(s);
	c->tbc = tb_client_new(s->tb, c->pid, c->uid, fds, MAX_HANDOVER_FDS, &nfds);
	if (!c->tbc) {
		int err = errno ? errno : ENOMEM;

		if (err == ENOMEM)
			oom_note(s, c->pid, "a timer client (HELLO refused)");
		else
			log_repeat(&s->client_errors, LOG_WARNING, false,
				   "control: pid %ld uid %lu: cannot make a timer client: %s (further failures "
				   "are only counted)", (long)c->pid, (unsigned long)c->uid, strerror(err));
		/* The daemon's descriptors ran out, not the client's: EMFILE
		 * would tell it to close some of its own. A resource the
		 * daemon lacks for now is EAGAIN (POSIX's errno for it). */
		if (err == EMFILE || err == ENFILE)
			return send_error(c->fd, req->seq, EAGAIN, CTL_HELLO,
					  "the daemon is out of descriptors (%s); try again later", strerror(err));
		return send_error(c->fd, req->seq, err, CTL_HELLO, "cannot make the client: %s",
				  strerror(err));
	}
	tb_client_limit(c->tbc, quota);
	tb_client_lead(s->tb, c->tbc, client_realtime(c->pid));
	ctl_msg_init(&m, CTL_HELLO_ACK, req->seq);
	m.u.hello_ack.version = CTL_VERSION;
	m.u.hello_ack.ncpus = s->lim.ncpus;
	m.u.hello_ack.ring_slots = s->p.ring_slots;
	m.u.hello_ack.max_timers = quota;
	m.u.hello_ack.max_msgs_per_sec = s->p.max_msgs_per_sec;
	rc = send_msg(c->fd, &m, fds, nfds);
	/* The memfd is mapped by the bases and now the client's too; the
	 * eventfds stay open here (the bases use them). */
	close(fds[0]);
	/* Debug, as the departures: a client's comings and goings are not
	 * news, and a connection flooder would fill the journal. */
	log_debug("control: client pid %ld uid %lu gid %lu: HELLO, %u descriptors handed over, lead %llu ns",
		  (long)c->pid, (unsigned long)c->uid, (unsigned long)c->gid, nfds,
		  (unsigned long long)tb_client_lead_ns(c->tbc));
	return rc;
}

static int reply_ok_or_error(struct conn *c, const struct ctl_msg *req, uint32_t timer_id, int rc)
{
	struct ctl_msg m;

	if (rc < 0)
		return send_error(c->fd, req->seq, -rc, req->type, "%s of timer %" PRIu32 ": %s",
				  ctl_type_name(req->type), timer_id, strerror(-rc));
	ctl_msg_init(&m, CTL_OK, req->seq);
	m.u.ok.timer_id = timer_id;
	return send_msg(c->fd, &m, NULL, 0);
}

/* Socket ARMs carry no generation: the request's seq is the one (a FIRE
 * of this arm carries it back). */
static int do_arm(struct conn *c, const struct ctl_msg *req)
{
	int rc = tb_client_arm(c->srv->tb, c->tbc, &req->u.arm, req->seq);

	if (rc == -ENOMEM)
		oom_note(c->srv, c->pid, "an ARM command");
	return reply_ok_or_error(c, req, req->u.arm.timer_id, rc);
}

static int do_cancel(struct conn *c, const struct ctl_msg *req)
{
	int rc = tb_client_cancel(c->srv->tb, c->tbc, req->u.cancel.timer_id);

	if (rc == -ENOMEM)
		oom_note(c->srv, c->pid, "a CANCEL command");
	return reply_ok_or_error(c, req, req->u.cancel.timer_id, rc);
}

static int do_reserve(struct conn *c, const struct ctl_msg *req)
{
	int rc = tb_client_reserve(c->srv->tb, c->tbc, req->u.reserve.count);

	if (rc < 0)
		return send_error(c->fd, req->seq, -rc, req->type, "RESERVE of %" PRId32 " timer ids: %s",
				  req->u.reserve.count,
				  rc == -EAGAIN ? "max_timers_per_user reached" : strerror(-rc));
	return reply_ok_or_error(c, req, 0, 0);
}

static int do_stats(struct conn *c, const struct ctl_msg *req)
{
	struct tb_client_stats st;
	struct ctl_msg m;

	tb_client_stats(c->srv->tb, c->tbc, &st);
	ctl_msg_init(&m, CTL_STATS_REPLY, req->seq);
	m.u.stats_reply.pending = st.pending;
	m.u.stats_reply.fired = st.fired;
	m.u.stats_reply.overruns = st.overruns;
	m.u.stats_reply.dropped = st.dropped;
	return send_msg(c->fd, &m, NULL, 0);
}

static int do_cpu_stats(struct conn *c, const struct ctl_msg *req)
{
	struct tb_cpu_stats st;
	struct ctl_cpu_stats_reply *r;
	struct ctl_msg m;

	if (timer_bases_cpu_stats(c->srv->tb, req->u.index.index, &st) < 0)
		return send_error(c->fd, req->seq, ENOENT, CTL_CPU_STATS, "no timer base %" PRIu32 " (%u bases)",
				  req->u.index.index, timer_bases_ncpus(c->srv->tb));
	ctl_msg_init(&m, CTL_CPU_STATS_REPLY, req->seq);
	r = &m.u.cpu_stats_reply;
	r->cpu = st.cpu;
	r->clients = st.clients;
	r->pending_jiffies = st.pending_jiffies;
	r->pending_ns = st.pending_ns;
	r->fired = st.fired;
	r->overruns = st.overruns;
	r->next_expiry_ns = st.next_expiry_ns;
	r->late_p50_ns = st.late_p50_ns;
	r->late_p99_ns = st.late_p99_ns;
	r->late_max_ns = st.late_max_ns;
	return send_msg(c->fd, &m, NULL, 0);
}

/* Whether @c is root or a member of stats_gid (its primary group or one of
 * its supplementary groups, as the kernel saw them at connect: SO_PEERGROUPS). */
static bool conn_is_admin(const struct conn *c)
{
	gid_t groups[256];
	socklen_t len = sizeof(groups);
	gid_t g = c->srv->p.stats_gid;

	if (c->uid == 0)
		return true;
	if (g == (gid_t)-1)
		return false;
	if (c->gid == g)
		return true;
	if (getsockopt(c->fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) < 0)
		return false;
	for (size_t i = 0; i < len / sizeof(groups[0]); i++)
		if (groups[i] == g)
			return true;
	return false;
}

/* The index-th connection that said HELLO, in order of connection, of
 * those @c may see: its own uid's, or every one for root and members of
 * stats_group (pids, uids and counters are not every user's business). */
static int do_client_stats(struct conn *c, const struct ctl_msg *req)
{
	struct ctlserver *s = c->srv;
	bool all = conn_is_admin(c);
	uint32_t k = 0;
	struct conn *t;

	for (t = s->conns; t; t = t->next)
		if (t->tbc && (all || t->uid == c->uid) && k++ == req->u.index.index)
			break;
	if (!t)
		return send_error(c->fd, req->seq, ENOENT, CTL_CLIENT_STATS, "no client %" PRIu32 " (%" PRIu32 ")",
				  req->u.index.index, k);

	struct tb_client_stats st;
	struct ctl_msg m;

	tb_client_stats(s->tb, t->tbc, &st);
	ctl_msg_init(&m, CTL_CLIENT_STATS_REPLY, req->seq);
	m.u.client_stats_reply.pid = (uint32_t)t->pid;
	m.u.client_stats_reply.uid = (uint32_t)t->uid;
	m.u.client_stats_reply.pending = st.pending;
	m.u.client_stats_reply.fired = st.fired;
	m.u.client_stats_reply.overruns = st.overruns;
	m.u.client_stats_reply.dropped = st.dropped;
	return send_msg(c->fd, &m, NULL, 0);
}

typedef int request_fn(struct conn *c, const struct ctl_msg *req);

static const struct {
	uint16_t type;
	bool needs_hello;
	request_fn *fn;
} requests[] = {
	{ CTL_HELLO, false, do_hello },
	{ CTL_ARM, true, do_arm },
	{ CTL_CANCEL, true, do_cancel },
	{ CTL_STATS, true, do_stats },
	{ CTL_CPU_STATS, false, do_cpu_stats },
	{ CTL_CLIENT_STATS, false, do_client_stats },
	{ CTL_RESERVE, true, do_reserve },
};

static int dispatch(struct conn *c, const struct ctl_msg *req)
{
	for (size_t i = 0; i < sizeof(requests) / sizeof(requests[0]); i++) {
		if (requests[i].type != req->type)
			continue;
		if (requests[i].needs_hello && !c->tbc)
			return send_error(c->fd, req->seq, ENOTCONN, req->type, "%s before HELLO",
					  ctl_type_name(req->type));
		return requests[i].fn(c, req);
	}
	return -1; /* BYE */
}

/* One datagram of @len bytes (its real size, MSG_TRUNC): 0 to keep the
 * connection, -1 to close it (*why says why when it is not a failed
 * send). */
static int conn_message(struct conn *c, const unsigned char *buf, size_t len, size_t buflen,
			const char **why)
{
	int64_t now = mono_ns();
	bool ok = conn_take_token(c, now);
	char reason[CTL_WHY_MAX];
	struct ctl_msg req;
	int rc;

	if (conn_abusive(c, now, !ok)) {
		/* A flooder may come back at once, and again. */
		log_repeat(&c->srv->flooders, LOG_NOTICE, false,
			   "control: pid %ld uid %lu sent %" PRIu64 " messages in a second, quota %" PRIu32
			   "/s: disconnected (further such clients are only counted)", (long)c->pid,
			   (unsigned long)c->uid, c->abuse_msgs, c->srv->p.max_msgs_per_sec);
		*why = "message flood";
		return -1;
	}
	if (!ok)
		return send_error(c->fd, 0, EAGAIN, 0, "message rate above %" PRIu32 "/s",
				  c->srv->p.max_msgs_per_sec);
	rc = ctl_decode(buf, len < buflen ? len : buflen, &c->srv->lim, &req, reason, sizeof(reason));
	if (rc == 0 && (req.type & CTL_REPLY)) {
		rc = -EPROTO;
		snprintf(reason, sizeof(reason), "%s is a reply, not a request", ctl_type_name(req.type));
	}
	if (rc < 0) {
		/* Answer with what the header said, if there is one. */
		uint16_t type;
		uint32_t seq;

		ctl_peek(buf, len < buflen ? len : buflen, &type, &seq);
		log_debug("control: pid %ld: %s", (long)c->pid, reason);
		if (send_error(c->fd, seq, -rc, type, "%s", reason) < 0 || rc == -EPROTO) {
			*why = "protocol error";
			return -1;
		}
		return 0;
	}
	if (dispatch(c, &req) < 0) {
		if (req.type == CTL_BYE)
			*why = "BYE";
		return -1;
	}
	return 0;
}

static void on_conn(evutil_socket_t fd, short what, void *arg)
{
	struct conn *c = arg;
	unsigned char buf[CTL_MSG_MAX + 1];
	const char *why = "cannot send (socket buffer full or closed)";
	ssize_t n;

	(void)what;
	n = recv(fd, buf, sizeof(buf), MSG_TRUNC | MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		conn_free(c, n == 0 ? "disconnected" : strerror(errno));
		return;
	}
	if (c->tbc && tb_client_broken(c->tbc)) {
		conn_free(c, "its shared memory is corrupt");
		return;
	}
	if (conn_message(c, buf, (size_t)n, sizeof(buf), &why) < 0)
		conn_free(c, why);
}

/* ---- accepting ---- */

/* Connections of @uid: a walk of at most max_clients, at accept only. */
static uint32_t conns_of(const struct ctlserver *s, uid_t uid)
{
	uint32_t n = 0;

	for (const struct conn *c = s->conns; c; c = c->next)
		n += c->uid == uid;
	return n;
}

static void conn_new(struct ctlserver *s, int fd)
{
	struct ucred cred = { .pid = 0, .uid = (uid_t)-1, .gid = (gid_t)-1 };
	socklen_t clen = sizeof(cred);
	uint32_t nuser;
	struct conn *c;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) < 0)
		log_warn("control: SO_PEERCRED");
	if (s->nconns >= s->p.max_clients) {
		log_repeat(&s->refused, LOG_NOTICE, false,
			   "control: pid %ld uid %lu refused: %" PRIu32 " clients already (max_clients)",
			   (long)cred.pid, (unsigned long)cred.uid, s->nconns);
		send_error(fd, 0, EDQUOT, 0, "too many clients");
		close(fd);
		return;
	}
	if (s->p.max_clients_per_user && s->p.max_clients_per_user < s->p.max_clients &&
	    (nuser = conns_of(s, cred.uid)) >= s->p.max_clients_per_user) {
		log_repeat(&s->refused_user, LOG_NOTICE, false,
			   "control: pid %ld uid %lu refused: %" PRIu32 " clients of that user already "
			   "(max_clients_per_user)", (long)cred.pid, (unsigned long)cred.uid, nuser);
		send_error(fd, 0, EDQUOT, 0, "too many clients of uid %lu", (unsigned long)cred.uid);
		close(fd);
		return;
	}
	c = calloc(1, sizeof(*c));
	if (!c || !(c->ev = event_new(s->base, fd, EV_READ | EV_PERSIST, on_conn, c)) ||
	    event_add(c->ev, NULL) < 0) {
		oom_note(s, cred.pid, "a connection (closed)");
		if (c && c->ev)
			event_free(c->ev);
		free(c);
		close(fd);
		return;
	}
	c->srv = s;
	c->fd = fd;
	c->pid = cred.pid;
	c->uid = cred.uid;
	c->gid = cred.gid;
	c->tokens = s->p.max_msgs_per_sec;
	c->refill_ns = mono_ns();
	c->next = s->conns;
	if (s->conns)
		s->conns->prev = c;
	s->conns = c;
	s->nconns++;
	log_debug("control: connection from pid %ld uid %lu gid %lu", (long)c->pid, (unsigned long)c->uid,
		  (unsigned long)c->gid);
}

/*
 * Out of descriptors (or memory) for a new connection: the waiting one
 * keeps the socket readable, so listening on would spin on accept(). Stop
 * listening until a connection closes or the next sweep, a second later;
 * log the first pause and, when accepting again, how many there were.
 */
static void accept_pause(struct ctlserver *s, int err)
{
	if (!s->accept_paused) {
		event_del(s->ev_listen);
		s->accept_paused = true;
		if (s->accept_pauses++ == 0)
			log_warnx("control: cannot accept connections: %s; retrying every %d s (%" PRIu32
				  " clients served meanwhile)", strerror(err), SWEEP_SEC, s->nconns);
	}
}

static void accept_resume(struct ctlserver *s)
{
	if (!s->accept_paused)
		return;
	if (event_add(s->ev_listen, NULL) < 0)
		return; /* the next sweep tries again */
	s->accept_paused = false;
}

/*
 * Out of descriptors with a client waiting: give up the spare one, take
 * the client, tell it why (EAGAIN: a resource the daemon lacks for now,
 * not EMFILE, which would be the client's own table) and hang up, then
 * take the spare back. The client knows at once instead of after its
 * 5 s wait. False when there is no spare (another thread took the slot):
 * then the listener pauses. @err is accept's errno.
 */
static bool refuse_one(struct ctlserver *s, int lfd, int err)
{
	int fd;

	if (s->spare_fd < 0)
		return false;
	close(s->spare_fd);
	fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd >= 0) {
		/* Logged first: once the client has its answer, the log says
		 * why. */
		if (s->fd_refusals++ == 0)
			log_warnx("control: out of descriptors (%s): refusing clients with EAGAIN", strerror(err));
		send_error(fd, 0, EAGAIN, 0, "the daemon is out of descriptors (%s); try again later",
			   strerror(err));
		close(fd);
	}
	s->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	return fd >= 0 && s->spare_fd >= 0;
}

static void on_listen(evutil_socket_t lfd, short what, void *arg)
{
	struct ctlserver *s = arg;

	(void)what;
	for (;;) {
		int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0) {
			if ((errno == EMFILE || errno == ENFILE) && refuse_one(s, lfd, errno))
				continue;
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
				accept_pause(s, errno);
			else if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
				log_repeat(&s->accept_errors, LOG_WARNING, true, "control: accept");
			return;
		}
		log_repeat_end(&s->accept_errors, "control: accept works again");
		if (s->fd_refusals) {
			log_notice("control: descriptors again; %" PRIu64 " clients were refused meanwhile",
				   s->fd_refusals);
			s->fd_refusals = 0;
		}
		if (s->accept_pauses) {
			log_notice("control: accepting connections again (%" PRIu64 " pauses for lack of "
				   "descriptors)", s->accept_pauses);
			s->accept_pauses = 0;
		}
		conn_new(s, fd);
	}
}

/* Every second: clients whose shared memory a base found corrupt go even
 * if they send nothing; a run of allocation failures that stopped is
 * told. */
static void on_sweep(evutil_socket_t fd, short what, void *arg)
{
	struct ctlserver *s = arg;
	struct conn *c, *next;

	(void)fd;
	(void)what;
	for (c = s->conns; c; c = next) {
		next = c->next;
		if (c->tbc && tb_client_broken(c->tbc))
			conn_free(c, "its shared memory is corrupt");
	}
	/* Refusals end as a run once none came for a while (not at the next
	 * accept: a full server with clients coming and going would log a
	 * pair of lines for each). */
	log_repeat_end_quiet(&s->refused, QUIET_NS, "control: no client refused for %d s (max_clients %" PRIu32 ")",
			     (int)(QUIET_NS / SEC_NS), s->p.max_clients);
	log_repeat_end_quiet(&s->refused_user, QUIET_NS,
			     "control: no client refused for %d s (max_clients_per_user %" PRIu32 ")",
			     (int)(QUIET_NS / SEC_NS), s->p.max_clients_per_user);
	log_repeat_end_quiet(&s->flooders, QUIET_NS, "control: no message flood for %d s (quota %" PRIu32 "/s)",
			     (int)(QUIET_NS / SEC_NS), s->p.max_msgs_per_sec);
	log_repeat_end_quiet(&s->client_errors, QUIET_NS, "control: timer clients made again for %d s",
			     (int)(QUIET_NS / SEC_NS));
	accept_resume(s);
	/* The spare lost to another thread at a refusal, taken back. */
	if (s->spare_fd < 0)
		s->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	oom_sweep(s);
}

/* ---- the listening socket ---- */

static int fill_addr(struct sockaddr_un *sa, const char *path)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sa->sun_path)) {
		log_warnx("control_socket: %s: longer than %zu bytes", path, sizeof(sa->sun_path) - 1);
		return -1;
	}
	memcpy(sa->sun_path, path, strlen(path));
	return 0;
}

/* Something at @base in @dirfd (@path, @sa): a socket nobody answers on is
 * a dead daemon's and goes; anything else stays and is an error. */
static int clear_stale(int dirfd, const char *base, const char *path, const struct sockaddr_un *sa)
{
	struct stat st;
	int fd, rc;

	if (fstatat(dirfd, base, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : (log_warn("control_socket: %s", path), -1);
	if (!S_ISSOCK(st.st_mode)) {
		log_warnx("control_socket: %s exists and is not a socket; not replacing it", path);
		return -1;
	}
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return log_warn("control_socket: socket"), -1;
	rc = connect(fd, (const struct sockaddr *)sa, sizeof(*sa));
	if (rc == 0 || errno == EAGAIN || errno == EINPROGRESS) {
		close(fd);
		log_warnx("control_socket: %s: another daemon answers on it; not replacing it", path);
		return -1;
	}
	close(fd);
	if (errno != ECONNREFUSED && errno != EPROTOTYPE) {
		log_warn("control_socket: %s: cannot tell whether it is in use", path);
		return -1;
	}
	if (unlinkat(dirfd, base, 0) < 0)
		return log_warn("control_socket: %s: cannot remove the stale socket", path), -1;
	log_notice("control_socket: %s: removed the stale socket of a daemon that is gone", path);
	return 0;
}

/* The address of @name in @dirfd, the directory of @path (whose last
 * part is @base): through the held directory when /proc names it, else by
 * the path (its directory was checked all the same). -1 if it does not
 * fit an address. */
static int name_addr(int dirfd, const char *path, const char *base, const char *name, struct sockaddr_un *sa)
{
	size_t n = strlen(path), b = strlen(base);

	if (access("/proc/self/fd", X_OK) == 0 && safepath_sockaddr(dirfd, name, sa) == 0)
		return 0;
	if (b > n || strcmp(path + n - b, base) != 0 || n - b + strlen(name) >= sizeof(sa->sun_path))
		return -1;
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	memcpy(sa->sun_path, path, n - b);
	memcpy(sa->sun_path + n - b, name, strlen(name));
	return 0;
}

/*
 * Bound in a directory checked by safepath_dir and held open, through
 * /proc/self/fd (where it cannot be, by the path: the directory is
 * trusted anyway): the mode comes from the umask at bind, the group is set
 * without following a link, and the node is checked to be the socket.
 * Bound under a hidden name and linked into place once it listens, so
 * that a client waiting for the file never finds it refusing (between
 * bind and listen, connect fails with ECONNREFUSED); the link fails if
 * another daemon took the name meanwhile. By the name itself when the
 * hidden one does not fit an address.
 */
int ctlserver_listen(const char *path, gid_t gid)
{
	struct sockaddr_un sa, tsa;
	char base[sizeof(sa.sun_path)], tmp[sizeof(sa.sun_path)];
	const char *name;
	int fd = -1, dirfd, rc;
	mode_t old;

	if (fill_addr(&sa, path) < 0)
		return -1;
	dirfd = safepath_dir("control_socket", path, base, sizeof(base));
	if (dirfd < 0)
		return -1;
	if (name_addr(dirfd, path, base, base, &sa) < 0)
		(void)fill_addr(&sa, path);
	if (clear_stale(dirfd, base, path, &sa) < 0)
		goto err_close;
	/* The hidden name, ".BASE.PID", where its address fits. */
	name = base;
	if ((size_t)snprintf(tmp, sizeof(tmp), ".%s.%ld", base, (long)getpid()) < sizeof(tmp) &&
	    name_addr(dirfd, path, base, tmp, &tsa) == 0) {
		(void)unlinkat(dirfd, tmp, 0); /* left by a daemon of our pid that died */
		name = tmp;
		sa = tsa;
	}
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		log_warn("control_socket: socket");
		goto err_close;
	}
	/* 0660 from the start: never more, not even for an instant. */
	old = umask(0117);
	rc = bind(fd, (const struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (rc < 0) {
		log_warn("control_socket: %s: bind", path);
		goto err_close;
	}
	if (gid != (gid_t)-1 && fchownat(dirfd, name, (uid_t)-1, gid, AT_SYMLINK_NOFOLLOW) < 0) {
		log_warn("control_socket: %s: cannot give it to group %lu", path, (unsigned long)gid);
		goto err_unlink;
	}
	if (safepath_check_socket(dirfd, name, path, gid, 0660) < 0)
		goto err_close; /* not ours to unlink */
	if (listen(fd, 64) < 0) {
		log_warn("control_socket: %s: listen", path);
		goto err_unlink;
	}
	if (name == tmp) {
		if (linkat(dirfd, tmp, dirfd, base, 0) < 0) {
			log_warn("control_socket: %s: cannot put the socket in place", path);
			goto err_unlink;
		}
		(void)unlinkat(dirfd, tmp, 0);
	}
	close(dirfd);
	return fd;
err_unlink:
	unlinkat(dirfd, name, 0);
err_close:
	if (fd >= 0)
		close(fd);
	close(dirfd);
	return -1;
}

int ctlserver_adopt(struct ctlserver **out, struct event_base *base, struct timer_bases *tb,
		    const struct ctlserver_params *p, int fd)
{
	struct ctlserver *s = calloc(1, sizeof(*s));
	uint64_t mask = timer_bases_cpu_mask(tb);
	struct timeval sweep = { .tv_sec = SWEEP_SEC };

	if (!s)
		goto err_close;
	s->base = base;
	s->tb = tb;
	s->p = *p;
	s->fd = fd;
	s->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC); /* none: pause at EMFILE */
	snprintf(s->path, sizeof(s->path), "%s", p->path);
	s->p.path = s->path;
	s->unlink_at_close = p->owns_path;
	s->lim.ncpus = mask ? 64u - (unsigned)__builtin_clzll(mask) : 0;
	s->lim.max_timers = p->max_timers;
	s->ev_listen = event_new(base, fd, EV_READ | EV_PERSIST, on_listen, s);
	s->ev_sweep = event_new(base, -1, EV_PERSIST, on_sweep, s);
	if (!s->ev_listen || !s->ev_sweep || event_add(s->ev_listen, NULL) < 0 ||
	    event_add(s->ev_sweep, &sweep) < 0) {
		log_warnx("control: libevent: cannot add the socket's events");
		goto err_free;
	}
	*out = s;
	return 0;
err_free:
	if (s->spare_fd >= 0)
		close(s->spare_fd);
	if (s->ev_listen)
		event_free(s->ev_listen);
	if (s->ev_sweep)
		event_free(s->ev_sweep);
	free(s);
err_close:
	close(fd);
	return -1;
}

int ctlserver_open(struct ctlserver **out, struct event_base *base, struct timer_bases *tb,
		   const struct ctlserver_params *p)
{
	struct ctlserver_params own = *p;
	int fd = ctlserver_listen(p->path, (gid_t)-1);

	if (fd < 0)
		return -1;
	own.owns_path = true;
	if (ctlserver_adopt(out, base, tb, &own, fd) < 0) {
		unlink(p->path);
		return -1;
	}
	log_info("control: listening on %s (max_clients %" PRIu32 ", %" PRIu32 " per user, %" PRIu32
		 " msgs/s, %" PRIu32 " timers per client)", p->path, p->max_clients, p->max_clients_per_user,
		 p->max_msgs_per_sec, p->max_timers);
	return 0;
}

void ctlserver_close(struct ctlserver *s)
{
	if (!s)
		return;
	while (s->conns)
		conn_free(s->conns, "the daemon stops");
	event_free(s->ev_listen);
	event_free(s->ev_sweep);
	if (s->spare_fd >= 0)
		close(s->spare_fd);
	close(s->fd);
	if (s->unlink_at_close)
		unlink(s->path);
	free(s);
}
