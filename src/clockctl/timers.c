/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * clockctl timers: the daemon's timer bases and timer clients, asked over
 * the control socket (CPU_STATS and CLIENT_STATS, shared/ctlproto.h: a
 * monitor needs no HELLO). The one verb that does not read the page: the
 * socket is $CLOCKD_SOCKET, else CLOCKD_DEFAULT_SOCKET, or --socket PATH.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "clockctl/clockctl.h"
#include "shared/ctlproto.h"
#include "shared/paths.h"

#define REPLY_TIMEOUT_MS 5000
#define MAX_ROWS 4096 /* more clients than max_clients allows: a broken daemon */

struct timers_conn {
	int fd;
	const char *path;
	uint32_t seq;
};

static int timers_connect(struct timers_conn *tc)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	if (strlen(tc->path) >= sizeof(sa.sun_path)) {
		ctl_error("%s: socket path longer than %zu bytes", tc->path, sizeof(sa.sun_path) - 1);
		return CTL_EXIT_USAGE;
	}
	memcpy(sa.sun_path, tc->path, strlen(tc->path));
	tc->fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (tc->fd < 0 || connect(tc->fd, (const struct sockaddr *)&sa, sizeof(sa)) < 0) {
		ctl_error("%s: cannot connect to the daemon's control socket: %s", tc->path, strerror(errno));
		return CTL_EXIT_DAEMON;
	}
	return 0;
}

/*
 * Ask for the @index-th entry of @type and wait for the answer: 0 with
 * *@reply filled, -1 for ERROR ENOENT (past the last), or an exit status
 * after a message.
 */
static int timers_ask(struct timers_conn *tc, uint16_t type, uint32_t index, struct ctl_msg *reply)
{
	unsigned char buf[CTL_MSG_MAX + 1];
	struct pollfd pfd = { .fd = tc->fd, .events = POLLIN };
	struct ctl_msg req;
	char why[CTL_WHY_MAX];
	ssize_t n = -1;
	size_t len;

	ctl_msg_init(&req, type, ++tc->seq);
	req.u.index.index = index;
	len = ctl_encode(&req, buf, sizeof(buf));
	/* A daemon that refused us (too many clients) may have closed before
	 * the send: its ERROR saying why is still there to be read. */
	if (send(tc->fd, buf, len, MSG_NOSIGNAL) != (ssize_t)len && errno != EPIPE && errno != ECONNRESET)
		goto io_error;
	if (poll(&pfd, 1, REPLY_TIMEOUT_MS) != 1) {
		ctl_error("%s: no answer to %s within %d ms", tc->path, ctl_type_name(type), REPLY_TIMEOUT_MS);
		return CTL_EXIT_DAEMON;
	}
	n = recv(tc->fd, buf, sizeof(buf), MSG_TRUNC);
	/* Closed with our request unread: the reset comes first, then the
	 * ERROR the daemon sent, if it sent one. */
	if (n < 0 && errno == ECONNRESET) {
		n = recv(tc->fd, buf, sizeof(buf), MSG_TRUNC | MSG_DONTWAIT);
		if (n < 0)
			errno = ECONNRESET;
	}
	if (n <= 0)
		goto io_error;
	if (ctl_decode(buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf), NULL, reply, why, sizeof(why)) < 0) {
		ctl_error("%s: bad answer to %s: %s", tc->path, ctl_type_name(type), why);
		return CTL_EXIT_DAEMON;
	}
	if (reply->type == CTL_ERROR && reply->u.error.errno_code == ENOENT)
		return -1;
	if (reply->type == CTL_ERROR) {
		ctl_error("%s: %s refused: %s (%s)", tc->path, ctl_type_name(type), reply->u.error.why,
			  strerror(reply->u.error.errno_code));
		return CTL_EXIT_DAEMON;
	}
	if (reply->type != (type | CTL_REPLY) || reply->seq != tc->seq) {
		ctl_error("%s: answer %s to %s", tc->path, ctl_type_name(reply->type), ctl_type_name(type));
		return CTL_EXIT_DAEMON;
	}
	return 0;
io_error:
	ctl_error("%s: %s", tc->path, n == 0 ? "the daemon closed the connection" : strerror(errno));
	return CTL_EXIT_DAEMON;
}

/* Every entry of @type into @rows (at most MAX_ROWS); 0 or an exit status. */
static int timers_collect(struct timers_conn *tc, uint16_t type, struct ctl_msg *rows, unsigned *n)
{
	for (*n = 0; *n < MAX_ROWS; (*n)++) {
		int rc = timers_ask(tc, type, *n, &rows[*n]);

		if (rc < 0)
			return 0;
		if (rc)
			return rc;
	}
	return 0;
}

static int64_t now_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ctl_ts_ns(&ts);
}

/* ms from now to a kernel CLOCK_MONOTONIC time; false for none. */
static bool next_ms(uint64_t next_ns, int64_t now, double *ms)
{
	if (next_ns == UINT64_MAX)
		return false;
	*ms = (double)ctl_ns_sub((int64_t)next_ns, now) / 1e6;
	return true;
}

static void cpus_text(const struct ctl_msg *rows, unsigned n, int64_t now)
{
	printf("%-4s %7s %15s %12s %10s %10s  %s\n", "CPU", "clients", "pending jif/ns", "fired", "overruns",
	       "next ms", "late p50/p99/max us");
	for (unsigned i = 0; i < n; i++) {
		const struct ctl_cpu_stats_reply *r = &rows[i].u.cpu_stats_reply;
		char pending[40], next[24] = "-";
		double ms;

		snprintf(pending, sizeof(pending), "%" PRIu64 "/%" PRIu64, r->pending_jiffies, r->pending_ns);
		if (next_ms(r->next_expiry_ns, now, &ms))
			snprintf(next, sizeof(next), "%.3f", ms);
		printf("%-4" PRIu32 " %7" PRIu32 " %15s %12" PRIu64 " %10" PRIu64 " %10s  %.1f/%.1f/%.1f\n", r->cpu,
		       r->clients, pending, r->fired, r->overruns, next, (double)r->late_p50_ns / 1e3,
		       (double)r->late_p99_ns / 1e3, (double)r->late_max_ns / 1e3);
	}
}

static void clients_text(const struct ctl_msg *rows, unsigned n)
{
	printf("\n%-8s %-8s %10s %12s %10s %10s\n", "PID", "UID", "pending", "fired", "overruns", "dropped");
	for (unsigned i = 0; i < n; i++) {
		const struct ctl_client_stats_reply *r = &rows[i].u.client_stats_reply;

		printf("%-8" PRIu32 " %-8" PRIu32 " %10" PRIu64 " %12" PRIu64 " %10" PRIu64 " %10" PRIu64 "\n",
		       r->pid, r->uid, r->pending, r->fired, r->overruns, r->dropped);
	}
	if (n == 0)
		printf("(no timer clients)\n");
}

static struct json_object *cpu_json(const struct ctl_cpu_stats_reply *r, int64_t now)
{
	struct json_object *o = json_object_new_object();
	double ms;

	json_object_object_add(o, "cpu", json_object_new_int64(r->cpu));
	json_object_object_add(o, "clients", json_object_new_int64(r->clients));
	json_object_object_add(o, "pending_jiffies", json_object_new_uint64(r->pending_jiffies));
	json_object_object_add(o, "pending_ns", json_object_new_uint64(r->pending_ns));
	json_object_object_add(o, "fired", json_object_new_uint64(r->fired));
	json_object_object_add(o, "overruns", json_object_new_uint64(r->overruns));
	json_object_object_add(o, "next_expiry_ms",
			       next_ms(r->next_expiry_ns, now, &ms) ? json_object_new_double(ms) : NULL);
	json_object_object_add(o, "late_p50_ns", json_object_new_uint64(r->late_p50_ns));
	json_object_object_add(o, "late_p99_ns", json_object_new_uint64(r->late_p99_ns));
	json_object_object_add(o, "late_max_ns", json_object_new_uint64(r->late_max_ns));
	return o;
}

static struct json_object *client_json(const struct ctl_client_stats_reply *r)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "pid", json_object_new_int64(r->pid));
	json_object_object_add(o, "uid", json_object_new_int64(r->uid));
	json_object_object_add(o, "pending", json_object_new_uint64(r->pending));
	json_object_object_add(o, "fired", json_object_new_uint64(r->fired));
	json_object_object_add(o, "overruns", json_object_new_uint64(r->overruns));
	json_object_object_add(o, "dropped", json_object_new_uint64(r->dropped));
	return o;
}

static void timers_json(const char *path, const struct ctl_msg *cpus, unsigned ncpus,
			const struct ctl_msg *clients, unsigned nclients, int64_t now)
{
	struct json_object *o = json_object_new_object(), *a = json_object_new_array(),
			   *b = json_object_new_array();

	for (unsigned i = 0; i < ncpus; i++)
		json_object_array_add(a, cpu_json(&cpus[i].u.cpu_stats_reply, now));
	for (unsigned i = 0; i < nclients; i++)
		json_object_array_add(b, client_json(&clients[i].u.client_stats_reply));
	json_object_object_add(o, "socket", json_object_new_string(path));
	json_object_object_add(o, "cpus", a);
	json_object_object_add(o, "clients", b);
	ctl_json_print(o);
}

static int parse_timers_args(int argc, char **argv, const char **path, bool *json)
{
	enum { OPT_SOCKET = CTL_OPT_LONG, OPT_JSON };
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, OPT_SOCKET },
		{ "json", no_argument, NULL, OPT_JSON },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:", opts, NULL)) != -1) {
		switch (c) {
		case OPT_SOCKET:
			if (!*optarg)
				return ctl_usage_error("timers: --socket: empty path");
			*path = optarg;
			break;
		case OPT_JSON: *json = true; break;
		default: return ctl_option_error(argv, "timers: ", c);
		}
	}
	if (optind < argc)
		return ctl_usage_error("timers: '%s': unexpected argument", argv[optind]);
	return 0;
}

int verb_timers(const struct ctl *ctl, int argc, char **argv)
{
	const char *env = getenv("CLOCKD_SOCKET"), *shm = getenv("CLOCKD_SHM");
	char beside[108];
	struct timers_conn tc = { .fd = -1, .path = env };

	/* As the library: $CLOCKD_SOCKET, else beside the page. */
	if (!env || !*env) {
		if (socket_beside_page(shm && *shm ? shm : CLOCKD_DEFAULT_PAGE, beside, sizeof(beside)) < 0) {
			ctl_error("the socket beside the page %s: path too long", shm);
			return CTL_EXIT_USAGE;
		}
		tc.path = beside;
	}
	struct ctl_msg *cpus = calloc(MAX_ROWS, sizeof(*cpus)), *clients = calloc(MAX_ROWS, sizeof(*clients));
	unsigned ncpus = 0, nclients = 0;
	bool json = ctl->json;
	int rc;

	if (!cpus || !clients) {
		ctl_error("out of memory");
		rc = CTL_EXIT_DAEMON;
		goto out;
	}
	rc = parse_timers_args(argc, argv, &tc.path, &json);
	if (rc == 0)
		rc = timers_connect(&tc);
	if (rc == 0)
		rc = timers_collect(&tc, CTL_CPU_STATS, cpus, &ncpus);
	if (rc == 0)
		rc = timers_collect(&tc, CTL_CLIENT_STATS, clients, &nclients);
	if (rc == 0 && json) {
		timers_json(tc.path, cpus, ncpus, clients, nclients, now_mono_ns());
	} else if (rc == 0) {
		cpus_text(cpus, ncpus, now_mono_ns());
		clients_text(clients, nclients);
	}
out:
	if (tc.fd >= 0)
		close(tc.fd);
	free(cpus);
	free(clients);
	return rc;
}
