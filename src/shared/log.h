/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Logging, after OpenBSD ntpd's log.h. Lines go to stderr; under systemd
 * (stderr connected to the journal, $JOURNAL_STREAM) they carry sd-daemon
 * "<N>" priority prefixes. errno is preserved by every function.
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
/* Parse "error", "warning", "notice", "info", "debug"; -1 if none. */
int log_level_from_name(const char *name);

void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));  /* + strerror */
void log_warnx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_notice(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
noreturn void fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2)));  /* + strerror */
noreturn void fatalx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
