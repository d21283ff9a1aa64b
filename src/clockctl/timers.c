/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * clockctl timers: the daemon's timer bases and timer clients,
 * clockd_timer_cpu_stats() and clockd_timer_client_stats(), which ask the
 * control socket: $CLOCKD_SOCKET, else the file "control" beside the page,
 * or --socket PATH (which sets $CLOCKD_SOCKET). Without --socket the page
 * must be live, as for every verb that reads the daemon.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clockctl/clockctl.h"

#define MAX_ROWS 4096 /* more clients than max_clients allows: a broken daemon */

static const char legend[] =
	"Timer bases, one per CPU:\n"
	"  CPU            the CPU the base's thread is pinned to\n"
	"  clients        clients with a delivery ring on that CPU\n"
	"  pending jif/ns pending timers: on the jiffies wheel / nanosecond timers\n"
	"  fired          expiries delivered\n"
	"  overruns       expiries folded into overrun counts (periodic timers)\n"
	"  next ms        time to the next expiry (- for none)\n"
	"  late           lateness of recent expiries: median/99th percentile/max\n"
	"Timer clients:\n"
	"  PID, UID       the client process and its user (SO_PEERCRED)\n"
	"  pending        its pending timers\n"
	"  fired, overruns  as above, for this client\n"
	"  dropped        records its full delivery rings could not take\n";

struct timers_view {
	struct clockd_timer_cpu_stats *cpus;
	struct clockd_timer_client_stats *clients;
	int ncpus, nclients;
	const char *socket; /* for JSON: where they were asked */
	int64_t now;        /* kernel CLOCK_MONOTONIC, ns */
};

/* ms from now to a kernel CLOCK_MONOTONIC time; false for none. */
static bool next_ms(int64_t next_ns, int64_t now, double *ms)
{
	if (next_ns < 0)
		return false;
	*ms = (double)ctl_ns_sub((int64_t)next_ns, now) / 1e6;
	return true;
}

static void cpus_text(const struct timers_view *v)
{
	printf("%-4s %7s %15s %12s %10s %10s  %s\n", "CPU", "clients", "pending jif/ns", "fired", "overruns",
	       "next ms", "late p50/p99/max us");
	for (int i = 0; i < v->ncpus; i++) {
		const struct clockd_timer_cpu_stats *r = &v->cpus[i];
		char pending[40], next[24] = "-";
		double ms;

		snprintf(pending, sizeof(pending), "%" PRIu64 "/%" PRIu64, r->pending_jiffies, r->pending_ns);
		if (next_ms(r->next_expiry_ns, v->now, &ms))
			snprintf(next, sizeof(next), "%.3f", ms);
		printf("%-4" PRIu32 " %7" PRIu32 " %15s %12" PRIu64 " %10" PRIu64 " %10s  %.1f/%.1f/%.1f%s\n", r->cpu,
		       r->clients, pending, r->fired, r->overruns, next, (double)r->late_p50_ns / 1e3,
		       (double)r->late_p99_ns / 1e3, (double)r->late_max_ns / 1e3,
		       ctl_cpu_online(r->cpu) ? "" : "  CPU offline: its timers wait");
	}
}

static void clients_text(const struct timers_view *v)
{
	printf("\n%-8s %-8s %10s %12s %10s %10s\n", "PID", "UID", "pending", "fired", "overruns", "dropped");
	for (int i = 0; i < v->nclients; i++) {
		const struct clockd_timer_client_stats *r = &v->clients[i];

		printf("%-8" PRIu32 " %-8" PRIu32 " %10" PRIu64 " %12" PRIu64 " %10" PRIu64 " %10" PRIu64 "\n",
		       r->pid, r->uid, r->pending, r->fired, r->overruns, r->dropped);
	}
	if (v->nclients == 0)
		printf("(no timer clients)\n");
}

static struct json_object *cpu_json(const struct clockd_timer_cpu_stats *r, int64_t now, bool csv)
{
	struct json_object *o = json_object_new_object();
	double ms;

	if (csv)
		json_object_object_add(o, "record", json_object_new_string("cpu"));
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
	json_object_object_add(o, "online", json_object_new_boolean(ctl_cpu_online(r->cpu)));
	return o;
}

static struct json_object *client_json(const struct clockd_timer_client_stats *r, bool csv)
{
	struct json_object *o = json_object_new_object();

	if (csv)
		json_object_object_add(o, "record", json_object_new_string("client"));
	json_object_object_add(o, "pid", json_object_new_int64(r->pid));
	json_object_object_add(o, "uid", json_object_new_int64(r->uid));
	json_object_object_add(o, "pending", json_object_new_uint64(r->pending));
	json_object_object_add(o, "fired", json_object_new_uint64(r->fired));
	json_object_object_add(o, "overruns", json_object_new_uint64(r->overruns));
	json_object_object_add(o, "dropped", json_object_new_uint64(r->dropped));
	return o;
}

/* JSON: one object. CSV: two tables, the CPUs then the clients, each with
 * its header line; the first field (record) says which. */
static void timers_machine(const struct ctl *ctl, const struct timers_view *v)
{
	bool csv = ctl->format == CTL_CSV;
	struct json_object *a = json_object_new_array(), *b = json_object_new_array(), *o;

	for (int i = 0; i < v->ncpus; i++)
		json_object_array_add(a, cpu_json(&v->cpus[i], v->now, csv));
	for (int i = 0; i < v->nclients; i++)
		json_object_array_add(b, client_json(&v->clients[i], csv));
	if (csv) {
		const struct clockd_timer_client_stats none = { 0 };

		ctl_print(ctl, a, true);
		if (v->nclients == 0)
			ctl_csv_header(client_json(&none, true));
		ctl_print(ctl, b, true);
		return;
	}
	o = json_object_new_object();
	json_object_object_add(o, "socket", json_object_new_string(v->socket));
	json_object_object_add(o, "cpus", a);
	json_object_object_add(o, "clients", b);
	ctl_print(ctl, o, true);
}

/* --socket PATH: sets $CLOCKD_SOCKET, which the library reads. */
static int parse_timers_args(int argc, char **argv, bool *socket_given)
{
	enum { OPT_SOCKET = CTL_OPT_LONG };
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, OPT_SOCKET },
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
			if (setenv("CLOCKD_SOCKET", optarg, 1) < 0) {
				ctl_error("setenv CLOCKD_SOCKET: %s", strerror(errno));
				return CTL_EXIT_USAGE;
			}
			*socket_given = true;
			break;
		default: return ctl_option_error(argv, "timers: ", c);
		}
	}
	if (optind < argc)
		return ctl_usage_error("timers: '%s': unexpected argument", argv[optind]);
	return 0;
}

/* The socket the library asks, for the messages and JSON: as
 * clockd_timer_cpu_stats(3) says, $CLOCKD_SOCKET, else "control" beside
 * the page. */
static void socket_name(const struct clockd_status *st, char *buf, size_t len)
{
	const char *env = getenv("CLOCKD_SOCKET"), *slash = strrchr(st->page_path, '/');

	if (env && *env)
		snprintf(buf, len, "%s", env);
	else if (slash)
		snprintf(buf, len, "%.*s/control", (int)(slash - st->page_path), st->page_path);
	else
		snprintf(buf, len, "control");
}

/* Both lists into @v; 0 or an exit status after a message. The socket
 * is asked even when the page is absent or its daemon gone: under socket
 * activation the first client is what starts the daemon. When no daemon
 * answers and @page_checked is false, the page's state is the message
 * (absent, gone), as for every status-like verb. */
static int timers_collect(struct timers_view *v, bool page_checked)
{
	v->ncpus = clockd_timer_cpu_stats(v->cpus, sizeof(*v->cpus), MAX_ROWS);
	if (v->ncpus >= 0)
		v->nclients = clockd_timer_client_stats(v->clients, sizeof(*v->clients), MAX_ROWS);
	if (v->ncpus < 0 || v->nclients < 0) {
		int err = errno;
		struct clockd_status st;

		if (!page_checked && (err == ENOENT || err == ECONNREFUSED) && ctl_require_live(&st) != 0)
			return CTL_EXIT_DAEMON;
		ctl_error("%s: %s%s", v->socket, ctl_strerror(err),
			  err == ENOENT || err == ECONNREFUSED ? " (no daemon listens there; see --socket)" : "");
		return CTL_EXIT_DAEMON;
	}
	if (v->ncpus > MAX_ROWS)
		v->ncpus = MAX_ROWS;
	if (v->nclients > MAX_ROWS)
		v->nclients = MAX_ROWS;
	return 0;
}

int verb_timers(const struct ctl *ctl, int argc, char **argv)
{
	struct timers_view v = { .ncpus = 0 };
	struct clockd_status st = { .state = CLOCKD_STATE_ABSENT };
	bool socket_given = false;
	char sock[300];
	struct timespec ts;
	int rc;

	rc = parse_timers_args(argc, argv, &socket_given);
	if (rc)
		return rc;
	if (clockd_status(&st, sizeof(st)) < 0) {
		st.page_path[0] = '\0';
	} else if (!socket_given && st.state == CLOCKD_STATE_STALE) {
		/* A daemon that holds its page but does not update it may not
		 * answer either: say what the page says. */
		return ctl_require_live(&st);
	}
	socket_name(&st, sock, sizeof(sock));
	v.socket = sock;
	v.cpus = calloc(MAX_ROWS, sizeof(*v.cpus));
	v.clients = calloc(MAX_ROWS, sizeof(*v.clients));
	if (!v.cpus || !v.clients) {
		ctl_error("out of memory");
		rc = CTL_EXIT_DAEMON;
		goto out;
	}
	rc = timers_collect(&v, socket_given);
	if (rc == 0 && !socket_given && st.state != CLOCKD_STATE_LIVE) {
		/* It answered (and was perhaps started by this very call):
		 * the page says whether it is live now. */
		rc = ctl_require_live(&st);
		if (rc)
			goto out;
	}
	if (rc)
		goto out;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	v.now = ctl_ts_ns(&ts);
	if (ctl->format != CTL_TEXT) {
		timers_machine(ctl, &v);
	} else {
		ctl_legend(ctl, legend);
		cpus_text(&v);
		clients_text(&v);
	}
out:
	free(v.cpus);
	free(v.clients);
	return rc;
}
