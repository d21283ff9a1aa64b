/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* clockctl: errors, JSON printing and the daemon-state explanations. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clockctl/clockctl.h"

void ctl_error(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout); /* keep stdout and stderr in order on a terminal */
	fputs("clockctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int ctl_usage_error(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fputs("clockctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs(" (see 'clockctl --help')\n", stderr);
	return CTL_EXIT_USAGE;
}

int ctl_option_error(char **argv, const char *prefix, int c)
{
	const char *why = "unknown option";
	char name[64];

	/* Long options have vals above 0xff, so optopt tells a short option
	 * (which may sit inside a group such as "-xV", where optind has not
	 * moved on yet) from a long one (which always moved optind on). */
	if (optopt > 0 && optopt < 0x100)
		snprintf(name, sizeof(name), "-%c", optopt);
	else
		snprintf(name, sizeof(name), "%s", argv[optind - 1]);
	if (c == ':')
		why = "needs an argument";
	else if (optopt >= 0x100)
		why = "takes no argument";
	return ctl_usage_error("%s%s: %s", prefix, name, why);
}

void ctl_json_print(struct json_object *o)
{
	/* Plain: one line per document, which watch's JSON Lines need. */
	puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
}

const char *ctl_state_name(uint32_t state)
{
	static const char *const names[] = {
		[CLOCKD_STATE_ABSENT] = "absent",
		[CLOCKD_STATE_LIVE] = "live",
		[CLOCKD_STATE_STALE] = "stale",
		[CLOCKD_STATE_GONE] = "gone",
	};

	if (state < sizeof(names) / sizeof(names[0]) && names[state])
		return names[state];
	return "unknown";
}

const char *ctl_fmt_ns(char *buf, size_t len, int64_t ns)
{
	/* Sign apart from the magnitude, so -0.5 s prints as -0.500000000
	 * (C division truncates: -500000000 / 1e9 would lose the sign). */
	uint64_t mag = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;

	snprintf(buf, len, "%s%" PRIu64 ".%09" PRIu64, ns < 0 ? "-" : "", mag / 1000000000,
		 mag % 1000000000);
	return buf;
}

/* Why the daemon behind *@st cannot answer, in a few words. */
static void explain(const struct clockd_status *st)
{
	switch (st->state) {
	case CLOCKD_STATE_STALE:
		ctl_error("time page %s: stale: not updated for %" PRId64 " ms (limit %" PRIu64 " ms)",
			  st->page_path, st->age_ns / 1000000, st->stale_ns / 1000000);
		break;
	case CLOCKD_STATE_GONE:
		ctl_error("time page %s: gone: its daemon (pid %" PRIu32 ") exited or was killed",
			  st->page_path, st->pid);
		break;
	default:
		ctl_error("time page %s: %s", st->page_path, strerror(st->errno_hint));
		break;
	}
}

int ctl_require_live(struct clockd_status *st)
{
	if (clockd_status(st, sizeof(*st)) < 0) {
		ctl_error("clockd_status: %s", strerror(errno));
		return CTL_EXIT_DAEMON;
	}
	if (st->state == CLOCKD_STATE_LIVE)
		return 0;
	explain(st);
	return CTL_EXIT_DAEMON;
}

int ctl_read_failed(int err)
{
	struct clockd_status st = { 0 };

	/* The page may have gone between the status and the read: the
	 * status taken now names the reason; if it finds the daemon live
	 * again, report the read's own errno. */
	if (clockd_status(&st, sizeof(st)) == 0 && st.state != CLOCKD_STATE_LIVE)
		explain(&st);
	else
		ctl_error("time page %s: %s", st.page_path, strerror(err));
	return CTL_EXIT_DAEMON;
}
