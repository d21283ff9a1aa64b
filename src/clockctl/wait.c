/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * clockctl wait [--synced] [--timeout SECONDS]: return once the daemon is
 * live (and, with --synced, its page says synchronised), as chronyc
 * waitsync does; clockd-wait.service runs it so that units can order
 * themselves after a usable clock. It polls clockd_status() every 100 ms:
 * the page has no change notification, and a tenth of a second is well
 * inside what a boot ordering needs.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <clockd/page.h>

#include "clockctl/clockctl.h"

#define POLL_NS 100000000LL
#define NSEC_PER_SEC 1000000000LL
/* The longest timeout accepted, s: a year. */
#define WAIT_TIMEOUT_MAX (366.0 * 86400.0)

static int parse_wait_args(int argc, char **argv, bool *synced, int64_t *timeout_ns)
{
	enum { OPT_SYNCED = CTL_OPT_LONG, OPT_TIMEOUT };
	static const struct option opts[] = {
		{ "synced", no_argument, NULL, OPT_SYNCED },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	double v;
	int c;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:", opts, NULL)) != -1) {
		switch (c) {
		case OPT_SYNCED: *synced = true; break;
		case OPT_TIMEOUT:
			errno = 0;
			v = strtod(optarg, &end);
			if (errno || end == optarg || *end || !isfinite(v) || v < 0 || v > WAIT_TIMEOUT_MAX)
				return ctl_usage_error("wait: --timeout '%s': not a number of seconds in "
						       "[0, %g] (0: for ever)", optarg, WAIT_TIMEOUT_MAX);
			*timeout_ns = llround(v * (double)NSEC_PER_SEC);
			break;
		default: return ctl_option_error(argv, "wait: ", c);
		}
	}
	if (optind < argc)
		return ctl_usage_error("wait: '%s': unexpected argument", argv[optind]);
	return 0;
}

static int64_t mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ctl_ts_ns(&ts);
}

static bool ready(const struct clockd_status *st, bool synced)
{
	return st->state == CLOCKD_STATE_LIVE && (!synced || (st->flags & CLOCKD_PAGE_SYNCED));
}

static void report(const struct ctl *ctl, const struct clockd_status *st, bool ok, int64_t waited)
{
	struct json_object *o;

	if (ctl->format == CTL_TEXT) {
		if (ok)
			printf("clockd is %s%s (waited %.1f s)\n", clockd_state_name(st->state),
			       st->flags & CLOCKD_PAGE_SYNCED ? " and synchronised" : "", (double)waited / 1e9);
		return;
	}
	o = json_object_new_object();
	json_object_object_add(o, "ready", json_object_new_boolean(ok));
	json_object_object_add(o, "state", json_object_new_string(clockd_state_name(st->state)));
	json_object_object_add(o, "synced", json_object_new_boolean(!!(st->flags & CLOCKD_PAGE_SYNCED)));
	ctl_json_add_time(o, "waited", waited);
	ctl_print(ctl, o, true);
}

int verb_wait(const struct ctl *ctl, int argc, char **argv)
{
	const struct timespec nap = { .tv_nsec = POLL_NS };
	struct clockd_status st = { .state = CLOCKD_STATE_ABSENT };
	int64_t timeout_ns = 0, start, waited;
	bool synced = false;
	int rc;

	rc = parse_wait_args(argc, argv, &synced, &timeout_ns);
	if (rc)
		return rc;
	start = mono_now();
	for (;;) {
		if (clockd_status(&st, sizeof(st)) < 0) {
			ctl_error("clockd_status: %s", ctl_strerror(errno));
			return CTL_EXIT_DAEMON;
		}
		waited = mono_now() - start;
		if (ready(&st, synced)) {
			report(ctl, &st, true, waited);
			return CTL_EXIT_OK;
		}
		if (timeout_ns && waited >= timeout_ns)
			break;
		nanosleep(&nap, NULL);
	}
	report(ctl, &st, false, waited);
	if (st.state == CLOCKD_STATE_LIVE)
		ctl_error("wait: the daemon is live but not synchronised after %.1f s", (double)waited / 1e9);
	else {
		ctl_error("wait: not ready after %.1f s:", (double)waited / 1e9);
		ctl_explain(&st);
	}
	return CTL_EXIT_DAEMON;
}
