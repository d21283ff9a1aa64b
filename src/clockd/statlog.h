/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Statistics logs, after chrony's `logdir` and `log tracking ...`: one
 * text file per kind in the log directory, one line per update, with a
 * commented header of the columns at the start and every STATLOG_BANNER
 * lines, for gnuplot (contrib/plot/clockd-plot.gp), awk or a spreadsheet.
 *
 *   tracking.log   a line per discipline update (reference event): the
 *                  state, offset, RMS offset, frequency, skew and bound
 *   reference.log  a line per reference event: its kernel time stamp, the
 *                  interval since the one before (a missed pulse shows as
 *                  2 s) and the offset measured
 *   timers.log     a line per timer base (CPU) every second: clients,
 *                  pending timers, expiries and overruns in that second,
 *                  lateness p50, p99, max
 *
 * Every line starts with the kernel's realtime in UTC, "YYYY-MM-DD
 * HH:MM:SS.uuuuuu" (two columns, as chrony's logs). The files are opened
 * for appending; statlog_reopen (SIGHUP, `clockctl reload`) closes and
 * reopens them by name, so logrotate can move them away first.
 *
 * Main thread only: it reads the page through pagefile's reader and the
 * timer bases through their statistics call.
 */
#ifndef CLOCKD_STATLOG_H
#define CLOCKD_STATLOG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

struct pagefile;
struct timer_bases;

#define STATLOG_BANNER 32 /* lines between two headers */
#define STATLOG_MAX_CPUS 64

enum statlog_kind { STATLOG_TRACKING, STATLOG_REFERENCE, STATLOG_TIMERS, STATLOG_KINDS };

struct statlog_params {
	char dir[256];           /* logdir */
	bool kind[STATLOG_KINDS]; /* log: which files */
};

struct statlog {
	struct statlog_params p;
	FILE *f[STATLOG_KINDS];
	unsigned lines[STATLOG_KINDS]; /* since the last header */
	int64_t last_event_ns;          /* ref_mono_ns of the last tracking line */
	int64_t timers_next_ns;         /* kernel CLOCK_MONOTONIC of the next timers lines */
	uint64_t fired[STATLOG_MAX_CPUS], overruns[STATLOG_MAX_CPUS];
	bool have_prev;
};

/*
 * Parse a `log` value (words tracking, reference, timers, separated by
 * commas or blanks; none or empty: none) into @kind. 0, or -1 with why.
 */
int statlog_parse(const char *value, bool kind[STATLOG_KINDS], char *why, size_t len);

/* Open the files (before privileges go: a missing log directory is made,
 * 0755, owned by @uid:@gid). Nothing to log: nothing opened. A file that
 * cannot be opened: a warning, that log is off. */
void statlog_open(struct statlog *sl, const struct statlog_params *p, uid_t uid, gid_t gid);
/* Write what changed since the last call; @tb may be NULL (no timers). */
void statlog_poll(struct statlog *sl, const struct pagefile *pf, struct timer_bases *tb);
/* Close and reopen every file by name (log rotation). */
void statlog_reopen(struct statlog *sl);
void statlog_close(struct statlog *sl);

#endif
