/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * clockd_timer_cpu_stats() and clockd_timer_client_stats(): a monitor's
 * questions on the control socket, CPU_STATS and CLIENT_STATS (no HELLO:
 * the daemon answers them on any connection), on a connection of their
 * own so that a monitor never disturbs the timer connection.
 */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "libclockd/internal.h"
#include "shared/ctlproto.h"

#define STATS_TIMEOUT_MS 5000
/* More entries than any daemon has (max_clients is far below): a daemon
 * that never says ENOENT is broken. */
#define STATS_MAX_ROWS 65536
/* The daemon's message rate quota refused a question (ERROR EAGAIN): ask
 * again after this long. */
#define RATE_BACKOFF_NS 20000000L

_Static_assert(sizeof(struct clockd_timer_cpu_stats) == CLOCKD_TIMER_CPU_STATS_SIZE_V1, "v1 size");
_Static_assert(sizeof(struct clockd_timer_client_stats) == CLOCKD_TIMER_CLIENT_STATS_SIZE_V1, "v1 size");

static int stats_connect(void)
{
	struct sockaddr_un sa;
	int fd, err;

	err = lib_socket_path(&sa);
	if (err < 0)
		return err;
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (const struct sockaddr *)&sa, sizeof(sa)) < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

/* Receive one message into *@m within the timeout: 0 or -errno. */
static int stats_recv(int fd, struct ctl_msg *m)
{
	unsigned char buf[CTL_MSG_MAX + 1];
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	ssize_t n;

	if (poll(&pfd, 1, STATS_TIMEOUT_MS) != 1)
		return -ETIMEDOUT;
	n = recv(fd, buf, sizeof(buf), MSG_TRUNC);
	/* Closed with our request unread: the reset comes first, then the
	 * ERROR the daemon sent, if it sent one. */
	if (n < 0 && errno == ECONNRESET)
		n = recv(fd, buf, sizeof(buf), MSG_TRUNC | MSG_DONTWAIT);
	if (n < 0)
		return errno == EAGAIN ? -ECONNRESET : -errno;
	if (n == 0)
		return -ECONNRESET;
	if (ctl_decode(buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf), NULL, m, NULL, 0) < 0)
		return -EPROTO;
	return 0;
}

/* Ask for entry @index of @type: 0 with *@reply filled, 1 past the last
 * entry (ERROR ENOENT), or -errno. */
static int stats_ask(int fd, uint16_t type, uint32_t index, struct ctl_msg *reply)
{
	const struct timespec backoff = { .tv_nsec = RATE_BACKOFF_NS };
	unsigned char buf[CTL_MSG_MAX];
	struct ctl_msg req;
	size_t len;
	int err;

	for (int tries = 0; tries < STATS_TIMEOUT_MS * 1000000L / RATE_BACKOFF_NS; tries++) {
		ctl_msg_init(&req, type, index + 1);
		req.u.index.index = index;
		len = ctl_encode(&req, buf, sizeof(buf));
		/* A daemon that refused us may have closed before the send:
		 * its ERROR saying why is still there to be read. */
		if (send(fd, buf, len, MSG_NOSIGNAL) != (ssize_t)len && errno != EPIPE && errno != ECONNRESET)
			return -errno;
		err = stats_recv(fd, reply);
		if (err < 0)
			return err;
		if (reply->type == CTL_ERROR && reply->u.error.errno_code == EAGAIN) {
			nanosleep(&backoff, NULL);
			continue;
		}
		if (reply->type == CTL_ERROR)
			return reply->u.error.errno_code == ENOENT ? 1 : -reply->u.error.errno_code;
		if (reply->type != (type | CTL_REPLY) || reply->seq != index + 1)
			return -EPROTO;
		return 0;
	}
	return -ETIMEDOUT;
}

typedef void stats_copy_fn(void *dst, size_t size, const struct ctl_msg *m);

/* Every entry of @type, the first @max copied by @copy into @st (@size
 * bytes apart, at least @v1 bytes): the count, or -1 with errno. */
static int stats_collect(uint16_t type, void *st, size_t size, size_t v1, int max, stats_copy_fn *copy)
{
	struct ctl_msg m;
	int fd, rc = 0, n;

	if (size < v1 || max < 0) {
		errno = EINVAL;
		return -1;
	}
	if (!st && max > 0) {
		errno = EFAULT;
		return -1;
	}
	fd = stats_connect();
	if (fd < 0) {
		errno = -fd;
		return -1;
	}
	for (n = 0; n < STATS_MAX_ROWS; n++) {
		rc = stats_ask(fd, type, (uint32_t)n, &m);
		if (rc != 0)
			break;
		if (n < max) {
			unsigned char *dst = (unsigned char *)st + (size_t)n * size;

			memset(dst, 0, size);
			copy(dst, size, &m);
		}
	}
	close(fd);
	if (rc < 0 || n == STATS_MAX_ROWS) {
		errno = rc < 0 ? -rc : EPROTO;
		return -1;
	}
	return n;
}

static void copy_cpu(void *dst, size_t size, const struct ctl_msg *m)
{
	const struct ctl_cpu_stats_reply *r = &m->u.cpu_stats_reply;
	struct clockd_timer_cpu_stats s = {
		.cpu = r->cpu,
		.clients = r->clients,
		.pending_jiffies = r->pending_jiffies,
		.pending_ns = r->pending_ns,
		.fired = r->fired,
		.overruns = r->overruns,
		/* The daemon's kernel CLOCK_MONOTONIC, as the caller's
		 * (in a time namespace, with its offset) reads it. */
		.next_expiry_ns = r->next_expiry_ns > INT64_MAX ? -1
								: (int64_t)r->next_expiry_ns + lib_timens_mono_ns(),
		.late_p50_ns = r->late_p50_ns,
		.late_p99_ns = r->late_p99_ns,
		.late_max_ns = r->late_max_ns,
	};

	/* A caller built against an older, smaller struct: its fields. */
	memcpy(dst, &s, size < sizeof(s) ? size : sizeof(s));
}

static void copy_client(void *dst, size_t size, const struct ctl_msg *m)
{
	const struct ctl_client_stats_reply *r = &m->u.client_stats_reply;
	struct clockd_timer_client_stats s = {
		.pid = r->pid,
		.uid = r->uid,
		.pending = r->pending,
		.fired = r->fired,
		.overruns = r->overruns,
		.dropped = r->dropped,
	};

	/* A caller built against an older, smaller struct: its fields. */
	memcpy(dst, &s, size < sizeof(s) ? size : sizeof(s));
}

CLOCKD_EXPORT int clockd_timer_cpu_stats(struct clockd_timer_cpu_stats *st, size_t size, int max)
{
	return stats_collect(CTL_CPU_STATS, st, size, CLOCKD_TIMER_CPU_STATS_SIZE_V1, max, copy_cpu);
}

CLOCKD_EXPORT int clockd_timer_client_stats(struct clockd_timer_client_stats *st, size_t size, int max)
{
	return stats_collect(CTL_CLIENT_STATS, st, size, CLOCKD_TIMER_CLIENT_STATS_SIZE_V1, max, copy_client);
}
