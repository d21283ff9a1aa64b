/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Output of the guest's device checks. Each check prints one unnumbered TAP
 * line ("ok - what" or "not ok - what") or a "# note"; the guest's /init
 * prefixes every line and the host numbers them (tests/vm/run.sh), so a
 * program need not know how many checks the others make.
 */
#ifndef CLOCKD_TESTS_VM_GUEST_H
#define CLOCKD_TESTS_VM_GUEST_H

#include <stdarg.h>
#include <stdio.h>
#include <time.h>

static inline __attribute__((format(printf, 2, 3)))
int guest_ok(int cond, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs(cond ? "ok - " : "not ok - ", stdout);
	vprintf(fmt, ap);
	putchar('\n');
	va_end(ap);
	fflush(stdout);
	return cond;
}

static inline __attribute__((format(printf, 1, 2)))
void guest_note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("# ", stdout);
	vprintf(fmt, ap);
	putchar('\n');
	va_end(ap);
	fflush(stdout);
}

static inline double guest_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

#endif
