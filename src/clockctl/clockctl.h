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
	CTL_EXIT_DAEMON = 1,   /* the daemon cannot answer: no page, stale, gone;
				* wait: not ready within the timeout */
	CTL_EXIT_USAGE = 2,    /* bad verb, option or argument */
	CTL_EXIT_REJECTED = 3, /* reload: the daemon rejected the configuration */
	/* run: the program could not be started (as env(1)); once started,
	 * its own exit status is clockctl's. */
	CTL_EXIT_CANNOT_EXEC = 126,
	CTL_EXIT_NOT_FOUND = 127,
};

enum ctl_format {
	CTL_TEXT = 0,
	CTL_JSON, /* --json: one JSON document (a line each for watch) */
	CTL_CSV,  /* -c, --csv: a header line, then a line per record */
};

/* Global options, accepted anywhere on the line (clockctl.c). */
struct ctl {
	enum ctl_format format;
	bool verbose; /* -v: text tables and reports start with a legend */
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
verb_fn verb_metrics;
verb_fn verb_run;
verb_fn verb_wait;

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

/*
 * Print @o in the machine format of @ctl and drop the reference: JSON as
 * it is; CSV, one record per line after a header line of the keys, where
 * @o is an object (one record) or an array of objects (a record each), and
 * a nested object's keys are joined with "." ("flags.synced"). @header
 * false leaves the header line out (watch's later lines).
 */
void ctl_print(const struct ctl *ctl, struct json_object *o, bool header);

/* CSV: the header line of the record @o alone (a table with no records
 * still has its header), and drop the reference. */
void ctl_csv_header(struct json_object *o);

/* A point in time or a duration that may grow without bound, as the two
 * exact JSON integers KEY_sec and KEY_nsec (nsec in 0..999999999, sec
 * carrying the sign): no JSON reader that uses doubles loses a digit. */
void ctl_json_add_time(struct json_object *o, const char *key, int64_t ns);
/* The leap second state of @st (status and tracking): "none", "insert",
 * "delete" (at the end of the UTC day), "unknown" (an older daemon). */
const char *ctl_leap_name(const struct clockd_status *st);
/* Its text line and JSON keys "leap" and "tai_offset" (null: unknown). */
void ctl_print_leap(const struct clockd_status *st);
void ctl_json_add_leap(struct json_object *o, const struct clockd_status *st);

/* -v: print @legend (lines of "  COLUMN  meaning") before a text table. */
void ctl_legend(const struct ctl *ctl, const char *legend);

/* strerror(@err), but saying what to do where there is something to do:
 * EACCES/EPERM name the group clockd and root. */
const char *ctl_strerror(int err);

/* Fill *@st. When the daemon is not live, print why on stderr (naming
 * the page path: "stale (no update for N ms)", "gone", ...) and return
 * CTL_EXIT_DAEMON; else 0. */
int ctl_require_live(struct clockd_status *st);
/* The same explanation for a status already taken (not live). */
void ctl_explain(const struct clockd_status *st);
/* A read of the page failed with @err: explain it the same way (the
 * library's status says whether the daemon is absent, stale or gone). */
int ctl_read_failed(int err);

/* Whether CPU @cpu is online (sysfs; a CPU without an online file, as
 * CPU 0 often is, cannot go offline). A timer base whose CPU is offline
 * runs none of its timers until it is back (clockd(8)). */
bool ctl_cpu_online(unsigned cpu);

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
