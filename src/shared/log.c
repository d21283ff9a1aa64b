/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>

#include "shared/log.h"

static const char *log_ident = "clockd";
static int log_level = LOG_INFO;
static bool log_prefix; /* sd-daemon "<N>" priority prefixes */

/* systemd sets $JOURNAL_STREAM to "DEV:INO" of the stream it connected;
 * a child whose stderr was redirected elsewhere inherits the variable, so
 * it counts only while it still names stderr. */
static bool stderr_is_journal(void)
{
	const char *js = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	if (!js || sscanf(js, "%llu:%llu", &dev, &ino) != 2 || fstat(2, &st) < 0)
		return false;
	return (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

void log_init(const char *ident, int level)
{
	log_ident = ident;
	log_level = level;
	log_prefix = stderr_is_journal();
}

void log_set_level(int level) { log_level = level; }
int log_get_level(void) { return log_level; }
bool log_to_journal(void) { return log_prefix; }

int log_level_from_name(const char *name)
{
	static const struct { const char *name; int level; } names[] = {
		{ "error", LOG_ERR }, { "warning", LOG_WARNING }, { "notice", LOG_NOTICE },
		{ "info", LOG_INFO }, { "debug", LOG_DEBUG },
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcasecmp(name, names[i].name) == 0)
			return names[i].level;
	return -1;
}

static void vlog(int pri, int err, const char *fmt, va_list ap)
{
	char msg[1024];

	if (pri > log_level)
		return;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (log_prefix)
		fprintf(stderr, "<%d>%s%s%s\n", pri, msg, err ? ": " : "", err ? strerror(err) : "");
	else
		fprintf(stderr, "%s: %s%s%s\n", log_ident, msg, err ? ": " : "", err ? strerror(err) : "");
}

#define LOG_FN(name, pri, with_errno)                                          \
	void name(const char *fmt, ...)                                        \
	{                                                                      \
		int saved = errno;                                             \
		va_list ap;                                                    \
		va_start(ap, fmt);                                             \
		vlog(pri, with_errno ? saved : 0, fmt, ap);                    \
		va_end(ap);                                                    \
		errno = saved;                                                 \
	}

void log_at(int pri, const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	va_start(ap, fmt);
	vlog(pri, 0, fmt, ap);
	va_end(ap);
	errno = saved;
}

LOG_FN(log_warn, LOG_WARNING, 1)
LOG_FN(log_warnx, LOG_WARNING, 0)
LOG_FN(log_notice, LOG_NOTICE, 0)
LOG_FN(log_info, LOG_INFO, 0)
LOG_FN(log_debug, LOG_DEBUG, 0)

static long long mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

void log_repeat(struct log_repeat *r, int pri, bool with_errno, const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	r->last_ns = mono_ns();
	if (r->count++ == 0) {
		va_start(ap, fmt);
		vlog(pri, with_errno ? saved : 0, fmt, ap);
		va_end(ap);
	}
	errno = saved;
}

static void vrepeat_end(struct log_repeat *r, const char *fmt, va_list ap)
{
	char msg[900];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	log_notice("%s (after %lu occurrence%s)", msg, r->count, r->count == 1 ? "" : "s");
	r->count = 0;
}

void log_repeat_end(struct log_repeat *r, const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	if (r->count == 0)
		return;
	va_start(ap, fmt);
	vrepeat_end(r, fmt, ap);
	va_end(ap);
	errno = saved;
}

void log_repeat_end_quiet(struct log_repeat *r, long long quiet_ns, const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	if (r->count == 0 || mono_ns() - r->last_ns < quiet_ns)
		return;
	va_start(ap, fmt);
	vrepeat_end(r, fmt, ap);
	va_end(ap);
	errno = saved;
}

void fatal(const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	va_start(ap, fmt);
	vlog(LOG_ERR, saved, fmt, ap);
	va_end(ap);
	exit(EXIT_FAILURE);
}

void fatalx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(LOG_ERR, 0, fmt, ap);
	va_end(ap);
	exit(EXIT_FAILURE);
}
