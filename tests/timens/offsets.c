/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The parser of /proc/self/timens_offsets (src/shared/timens.c): the
 * kernel's format, clock ids for names, negative offsets, and every
 * malformed line refused with both offsets left at 0.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "shared/timens.h"
#include "tests/tap.h"

/* @s on one line, for a TAP description: newlines as "|". */
static const char *flat(const char *s)
{
	static char buf[128];
	size_t n = strnlen(s, sizeof(buf) - 1), i;

	for (i = 0; i < n; i++)
		buf[i] = s[i] == '\n' ? '|' : s[i];
	buf[i] = 0;
	return buf;
}

static int parse(const char *s, struct timens_offsets *o)
{
	o->mono_ns = o->boot_ns = 12345; /* not what the parser leaves */
	return timens_parse(s, strlen(s), o);
}

static void good(const char *s, int64_t mono, int64_t boot)
{
	struct timens_offsets o;
	int r = parse(s, &o);

	tap_ok(r == 0 && o.mono_ns == mono && o.boot_ns == boot,
	       "\"%s\": mono %" PRId64 " boot %" PRId64 " (got %d, %" PRId64 ", %" PRId64 ")", flat(s), mono, boot, r,
	       o.mono_ns, o.boot_ns);
}

static void bad(const char *s)
{
	struct timens_offsets o;
	int r = parse(s, &o);

	tap_ok(r == -EPROTO && o.mono_ns == 0 && o.boot_ns == 0, "\"%s\" is refused, no offsets (got %d)", flat(s), r);
}

int main(void)
{
	tap_plan(13);
	good("", 0, 0);
	good("monotonic           0         0\nboottime            0         0\n", 0, 0);
	good("monotonic        1000         0\nboottime          -200         0\n", 1000000000000LL, -200000000000LL);
	good("monotonic          -1 999999999\nboottime             3         5", -1, 3000000005LL);
	good("1 7 250\n7 -4 0\n", 7000000250LL, -4000000000LL);
	bad("monotonic 1\n");
	bad("monotonic 1 1000000000\n");
	bad("monotonic 1 -1\n");
	bad("realtime 1 0\n");
	bad("0 1 0\n");
	bad("monotonic 1 0 2\n");
	bad("monotonic x 0\n");
	bad("monotonic 99999999999999999999 0\n");
	return tap_done();
}
