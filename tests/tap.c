/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "tests/tap.h"

static int tap_n, tap_failed;

void tap_plan(int n)
{
	printf("1..%d\n", n);
	fflush(stdout);
}

bool tap_ok(bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s %d - ", ok ? "ok" : "not ok", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (!ok)
		tap_failed++;
	return ok;
}

void tap_skip(const char *fmt, ...)
{
	va_list ap;

	printf("ok %d # SKIP ", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

void tap_diag(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

void tap_bail(const char *fmt, ...)
{
	va_list ap;

	printf("Bail out! ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	exit(99);
}

int tap_done(void)
{
	return tap_failed ? 1 : 0;
}
