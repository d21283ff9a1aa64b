/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Logging, after OpenBSD ntpd's log.h. Lines go to stderr; when stderr is
 * the journal ($JOURNAL_STREAM names stderr's device and inode, as systemd
 * sets it) they carry sd-daemon "<N>" priority prefixes instead of the
 * "clockd: " one, so the journal files each line at its level. errno is
 * preserved by every function.
 */
#ifndef CLOCKD_SHARED_LOG_H
#define CLOCKD_SHARED_LOG_H

#include <stdbool.h>
#include <stdnoreturn.h>
#include <syslog.h>

/* @level: a LOG_* priority, lines above it are dropped. */
void log_init(const char *ident, int level);
void log_set_level(int level);
int log_get_level(void);
/* Whether lines go to the journal (with "<N>" prefixes). */
bool log_to_journal(void);
/* Parse "error", "warning", "notice", "info", "debug"; -1 if none. */
int log_level_from_name(const char *name);

void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));  /* + strerror */
void log_warnx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_notice(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* At priority @pri (LOG_ERR...), no errno. */
void log_at(int pri, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/*
 * A condition that can repeat at every tick or every retry (a device call
 * failing, a peer refusing): the first occurrence of a run is logged, the
 * others are only counted, and the end of the run is logged once with the
 * count. So the log shows each change of state, never a flood. One
 * struct per condition, zero-initialised, used by one thread.
 */
struct log_repeat {
	unsigned long count; /* occurrences in the current run; 0: none */
	long long last_ns;   /* CLOCK_MONOTONIC of the last occurrence */
};
/* One occurrence at priority @pri (LOG_WARNING...): logged only when it
 * starts a run; @with_errno appends strerror(errno). */
void log_repeat(struct log_repeat *r, int pri, bool with_errno, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* The condition is over: if a run was on, log the message at notice with
 * " (after N occurrences)" and start afresh; otherwise nothing. */
void log_repeat_end(struct log_repeat *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* For a condition with no event that says it is over (a refusal, a failed
 * allocation): the run ends, as log_repeat_end, once the last occurrence
 * is @quiet_ns old or more; called from wherever the condition would show
 * (the next success, a periodic sweep). Until then, nothing. So a
 * condition that comes and goes is two lines, not a pair per occurrence. */
void log_repeat_end_quiet(struct log_repeat *r, long long quiet_ns, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

noreturn void fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2)));  /* + strerror */
noreturn void fatalx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
