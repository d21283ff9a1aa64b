/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * clockctl: shared pieces of the verbs. clockctl reads the daemon only
 * through libclockd's public API (<clockd/clockd.h>, constants from
 * <clockd/page.h>): whatever it shows, a client program can show too.
 */
#ifndef CLOCKCTL_CLOCKCTL_H
#define CLOCKCTL_CLOCKCTL_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include <json-c/json.h>

#include <clockd/clockd.h>

/* Exit status, documented in --help and clockctl(1). */
enum {
	CTL_EXIT_OK = 0,
	CTL_EXIT_DAEMON = 1,   /* the daemon cannot answer: no page, stale, gone */
	CTL_EXIT_USAGE = 2,    /* bad verb, option or argument */
	CTL_EXIT_NOT_LIVE = 3, /* status: report printed, the daemon is not live */
	/* run: the program could not be started (as env(1)); once started,
	 * its own exit status is clockctl's. */
	CTL_EXIT_CANNOT_EXEC = 126,
	CTL_EXIT_NOT_FOUND = 127,
};

/* Global options, parsed before the verb. */
struct ctl {
	bool json; /* --json: machine output built with json-c */
};

/* A verb's entry point: argv[0] is the verb's name. Returns an exit status. */
typedef int verb_fn(const struct ctl *ctl, int argc, char **argv);

verb_fn verb_status;
verb_fn verb_time;
verb_fn verb_jiffies;
verb_fn verb_watch;
verb_fn verb_sources;
verb_fn verb_tracking;
verb_fn verb_timers;
verb_fn verb_reload;
verb_fn verb_run;

/* --- output.c --- */

/* "clockctl: <message>" on stderr, one line. */
void ctl_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The same with a hint to --help; returns CTL_EXIT_USAGE. */
int ctl_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* getopt_long returned @c, '?' or ':': name the option as the user wrote
 * it, after @prefix, say what is wrong and return CTL_EXIT_USAGE. The
 * long options' vals must be above 0xff (CTL_OPT_LONG and up). */
int ctl_option_error(char **argv, const char *prefix, int c);
#define CTL_OPT_LONG 0x100

/* Print @o as one line of JSON and drop the reference. */
void ctl_json_print(struct json_object *o);

/* Name of a clockd_status state: "live", "stale", "gone", "absent". */
const char *ctl_state_name(uint32_t state);

/* Fill *@st. When the daemon is not live, print why on stderr (naming
 * the page path) and return CTL_EXIT_DAEMON; else 0. */
int ctl_require_live(struct clockd_status *st);
/* A read of the page failed with @err: explain it the same way (the
 * library's status says whether the daemon is absent, stale or gone). */
int ctl_read_failed(int err);

/* "sec.nsec" of a nanosecond count, into @buf. */
const char *ctl_fmt_ns(char *buf, size_t len, int64_t ns);

/* A timespec in ns, saturated at INT64_MIN and INT64_MAX: a page can hold
 * seconds no nanosecond count can (a forged one, at least). */
static inline int64_t ctl_ts_ns(const struct timespec *ts)
{
	int64_t ns;

	if (__builtin_mul_overflow((int64_t)ts->tv_sec, INT64_C(1000000000), &ns) ||
	    __builtin_add_overflow(ns, (int64_t)ts->tv_nsec, &ns))
		return ts->tv_sec < 0 ? INT64_MIN : INT64_MAX;
	return ns;
}

/* @a - @b, saturated. */
static inline int64_t ctl_ns_sub(int64_t a, int64_t b)
{
	int64_t d;

	if (__builtin_sub_overflow(a, b, &d))
		return b < 0 ? INT64_MAX : INT64_MIN;
	return d;
}

#endif
