/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * clockctl watch: a line per interval (a JSON object per line with --json)
 * until COUNT lines are printed or SIGINT/SIGTERM arrives. The first read
 * must find the daemon live (else it exits 1, as the other verbs); after
 * that it reports the daemon's state on every line rather than failing,
 * so it can watch a daemon stop and start again.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <clockd/page.h>

#include "clockctl/clockctl.h"

#define NSEC_PER_SEC 1000000000LL
/* Longest interval accepted, s: a day is plenty, and keeps the ns count
 * far from overflow. */
#define WATCH_INTERVAL_MAX 86400.0

static volatile sig_atomic_t watch_stop;

static void on_stop_signal(int sig)
{
	watch_stop = 1;
}

/* No SA_RESTART: the signal interrupts clock_nanosleep with EINTR. A
 * signal arriving between the check of watch_stop and the sleep is seen
 * one interval late; that window is a few instructions wide. */
static void catch_stop_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

/* SECONDS: a positive decimal number, fractions allowed. */
static int parse_interval(const char *s, int64_t *ns)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v <= 0 || v > WATCH_INTERVAL_MAX)
		return -1;
	*ns = llround(v * (double)NSEC_PER_SEC);
	return *ns > 0 ? 0 : -1;
}

/* COUNT: a non-negative decimal integer; 0 means forever. */
static int parse_count(const char *s, uint64_t *count)
{
	char *end;

	if (*s < '0' || *s > '9') /* strtoull would accept "-1" and " 1" */
		return -1;
	errno = 0;
	*count = strtoull(s, &end, 10);
	return errno || *end ? -1 : 0;
}

static int parse_watch_args(int argc, char **argv, int64_t *interval_ns, uint64_t *count)
{
	enum { OPT_INTERVAL = CTL_OPT_LONG, OPT_COUNT };
	static const struct option opts[] = {
		{ "interval", required_argument, NULL, OPT_INTERVAL },
		{ "count", required_argument, NULL, OPT_COUNT },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	optind = 0; /* restart GNU getopt on the verb's own arguments */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:i:n:", opts, NULL)) != -1) {
		switch (c) {
		case 'i':
		case OPT_INTERVAL:
			if (parse_interval(optarg, interval_ns) < 0)
				return ctl_usage_error("watch: --interval '%s': not a number of seconds "
						       "in (0, %g]", optarg, WATCH_INTERVAL_MAX);
			break;
		case 'n':
		case OPT_COUNT:
			if (parse_count(optarg, count) < 0)
				return ctl_usage_error("watch: --count '%s': not a count (0 = forever)",
						       optarg);
			break;
		default:
			return ctl_option_error(argv, "watch: ", c);
		}
	}
	if (optind < argc)
		return ctl_usage_error("watch: '%s': unexpected argument", argv[optind]);
	return 0;
}

static const char legend[] =
	"  jiffies    jiffies_64 of the page\n"
	"  monotonic  CLOCKD_MONOTONIC, seconds.nanoseconds (- when it cannot be read)\n"
	"  realtime   CLOCKD_REALTIME, seconds.nanoseconds (- when it cannot be read)\n"
	"  offset     estimated offset to the reference, ns (clockctl tracking; - without one)\n"
	"  frequency  rate correction applied, ppm (JSON and CSV: freq_ppb; - without a reference)\n"
	"  state      the daemon: live, stale, gone or absent\n";

struct sample {
	struct clockd_status st;
	uint32_t state;
	uint64_t j64;
	bool have_mono, have_real;
	struct timespec mono, real;
	bool have_track; /* a reference is configured and the tracking read */
	struct clockd_tracking track;
};

static void take_sample(struct sample *s)
{
	struct clockd_status st;

	memset(s, 0, sizeof(*s));
	if (clockd_status(&st, sizeof(st)) == 0) {
		s->st = st;
		s->state = st.state;
		s->j64 = st.jiffies_64;
	}
	s->have_mono = clockd_clock_gettime(CLOCKD_MONOTONIC, &s->mono) == 0;
	s->have_real = clockd_clock_gettime(CLOCKD_REALTIME, &s->real) == 0;
	s->have_track = s->state != CLOCKD_STATE_ABSENT && clockd_tracking(&s->track, sizeof(s->track)) == 0 &&
			s->track.state != CLOCKD_DISC_NONE;
}

/* JSON: the times as sec and nsec (exact in any reader); null for a
 * clock that could not be read. */
static void sample_json(const struct ctl *ctl, const struct sample *s, bool header)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "jiffies_64", s->state == CLOCKD_STATE_ABSENT
							? NULL : json_object_new_uint64(s->j64));
	if (s->have_mono) {
		ctl_json_add_time(o, "monotonic", ctl_ts_ns(&s->mono));
	} else {
		json_object_object_add(o, "monotonic_sec", NULL);
		json_object_object_add(o, "monotonic_nsec", NULL);
	}
	if (s->have_real) {
		ctl_json_add_time(o, "realtime", ctl_ts_ns(&s->real));
	} else {
		json_object_object_add(o, "realtime_sec", NULL);
		json_object_object_add(o, "realtime_nsec", NULL);
	}
	json_object_object_add(o, "offset_ns", s->have_track ? json_object_new_int64(s->track.offset_ns) : NULL);
	json_object_object_add(o, "freq_ppb", s->have_track ? json_object_new_int64(s->track.freq_ppb) : NULL);
	json_object_object_add(o, "state", json_object_new_string(clockd_state_name(s->state)));
	ctl_print(ctl, o, header);
}

static void sample_text(const struct sample *s)
{
	char mono[32] = "-", real[32] = "-", jif[24] = "-", off[32] = "-", freq[32] = "-";

	if (s->state != CLOCKD_STATE_ABSENT)
		snprintf(jif, sizeof(jif), "%" PRIu64, s->j64);
	if (s->have_mono)
		ctl_fmt_ns(mono, sizeof(mono), ctl_ts_ns(&s->mono));
	if (s->have_real)
		ctl_fmt_ns(real, sizeof(real), ctl_ts_ns(&s->real));
	if (s->have_track) {
		snprintf(off, sizeof(off), "%+" PRId64 " ns", s->track.offset_ns);
		snprintf(freq, sizeof(freq), "%+.3f ppm", (double)s->track.freq_ppb / 1000.0);
	}
	printf("jiffies %s  monotonic %s  realtime %s  offset %s  frequency %s  %s\n", jif, mono, real, off,
	       freq, clockd_state_name(s->state));
}

static struct timespec ns_to_timespec(int64_t ns)
{
	struct timespec ts = { .tv_sec = (time_t)(ns / NSEC_PER_SEC), .tv_nsec = (long)(ns % NSEC_PER_SEC) };

	return ts;
}

/* Sleep until @deadline_ns of the kernel's CLOCK_MONOTONIC, or a signal. */
static void sleep_until(int64_t deadline_ns)
{
	struct timespec ts = ns_to_timespec(deadline_ns);

	while (!watch_stop && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

int verb_watch(const struct ctl *ctl, int argc, char **argv)
{
	int64_t interval_ns = NSEC_PER_SEC, next;
	uint64_t count = 0, printed = 0;
	struct timespec now;
	struct sample s;
	int rc;

	rc = parse_watch_args(argc, argv, &interval_ns, &count);
	if (rc)
		return rc;
	catch_stop_signals();
	clock_gettime(CLOCK_MONOTONIC, &now);
	/* Absolute deadlines: the interval does not drift by the time the
	 * lines take to print. */
	next = ctl_ts_ns(&now);
	while (!watch_stop) {
		take_sample(&s);
		if (printed == 0 && s.state != CLOCKD_STATE_LIVE) {
			if (s.state == CLOCKD_STATE_ABSENT)
				return ctl_require_live(&s.st);
			ctl_explain(&s.st);
			return CTL_EXIT_DAEMON;
		}
		if (printed == 0)
			ctl_legend(ctl, legend);
		if (ctl->format != CTL_TEXT)
			sample_json(ctl, &s, printed == 0);
		else
			sample_text(&s);
		fflush(stdout);
		if (++printed == count)
			break;
		next += interval_ns;
		sleep_until(next);
	}
	return CTL_EXIT_OK;
}
