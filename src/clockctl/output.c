/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* clockctl: errors, JSON printing and the daemon-state explanations. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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

/* CSV: one field, quoted when it holds a comma, a quote or a line break
 * (RFC 4180). */
static void csv_field(const char *v)
{
	if (!strpbrk(v, ",\"\r\n")) {
		fputs(v, stdout);
		return;
	}
	putchar('"');
	for (; *v; v++) {
		if (*v == '"')
			putchar('"');
		putchar(*v);
	}
	putchar('"');
}

/* The fields of @o, depth first, nested objects' keys joined with ".":
 * their names (@names) or their values. */
static void csv_walk(struct json_object *o, const char *prefix, bool names, bool *first)
{
	json_object_object_foreach(o, key, val) {
		char name[128];

		snprintf(name, sizeof(name), "%s%s%s", prefix, *prefix ? "." : "", key);
		if (json_object_is_type(val, json_type_object)) {
			csv_walk(val, name, names, first);
			continue;
		}
		if (!*first)
			putchar(',');
		*first = false;
		if (names)
			csv_field(name);
		else if (val) /* null: an empty field */
			csv_field(json_object_is_type(val, json_type_string) ? json_object_get_string(val)
									  : json_object_to_json_string_ext(val, JSON_C_TO_STRING_PLAIN));
	}
}

/*
 * CSV rows start with a time column: when clockctl took the record, the
 * kernel's CLOCK_REALTIME in RFC 3339 UTC with nanoseconds
 * ("2026-12-06T00:55:03.123456789Z"), so rows collected over time (watch,
 * a cron job appending to a file) plot and join without a clock of their
 * own. One stamp for all the rows of one print.
 */
static void csv_time(char *buf, size_t len)
{
	struct timespec ts;
	struct tm tm;

	if (clock_gettime(CLOCK_REALTIME, &ts) < 0 || !gmtime_r(&ts.tv_sec, &tm) ||
	    !strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm)) {
		snprintf(buf, len, "-");
		return;
	}
	snprintf(buf + strlen(buf), len - strlen(buf), ".%09ldZ", ts.tv_nsec);
}

static void csv_line(struct json_object *o, bool names, const char *stamp)
{
	bool first = false;

	fputs(names ? "time" : stamp, stdout);
	csv_walk(o, "", names, &first);
	putchar('\n');
}

void ctl_print(const struct ctl *ctl, struct json_object *o, bool header)
{
	char stamp[64];
	size_t n;

	if (ctl->format == CTL_JSON) {
		ctl_json_print(o);
		return;
	}
	csv_time(stamp, sizeof(stamp));
	if (!json_object_is_type(o, json_type_array)) {
		if (header)
			csv_line(o, true, stamp);
		csv_line(o, false, stamp);
		json_object_put(o);
		return;
	}
	n = json_object_array_length(o);
	if (header && n > 0)
		csv_line(json_object_array_get_idx(o, 0), true, stamp);
	for (size_t i = 0; i < n; i++)
		csv_line(json_object_array_get_idx(o, i), false, stamp);
	json_object_put(o);
}

void ctl_csv_header(struct json_object *o)
{
	csv_line(o, true, NULL);
	json_object_put(o);
}

void ctl_json_add_time(struct json_object *o, const char *key, int64_t ns)
{
	/* Floor division: -0.5 s is sec -1, nsec 500000000. */
	int64_t sec = ns / 1000000000, nsec = ns % 1000000000;
	char name[64];

	if (nsec < 0) {
		sec--;
		nsec += 1000000000;
	}
	snprintf(name, sizeof(name), "%s_sec", key);
	json_object_object_add(o, name, json_object_new_int64(sec));
	snprintf(name, sizeof(name), "%s_nsec", key);
	json_object_object_add(o, name, json_object_new_int64(nsec));
}

void ctl_legend(const struct ctl *ctl, const char *legend)
{
	if (ctl->verbose && ctl->format == CTL_TEXT)
		printf("%s\n", legend);
}

const char *ctl_strerror(int err)
{
	switch (err) {
	case EACCES:
	case EPERM:
		return "permission denied: join the group clockd, or run as root";
	case ESTALE:
		return "stale: the daemon stopped updating its page (see 'clockctl status')";
	case EDQUOT: {
		/* The daemon refused the connection (its ERROR said which
		 * limit; the library hands on the errno alone). */
		static char buf[160];

		snprintf(buf, sizeof(buf), "refused: too many clients of uid %lu, or in all "
			 "(the daemon's max_clients_per_user, max_clients); try again later",
			 (unsigned long)getuid());
		return buf;
	}
	default:
		return strerror(err);
	}
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

void ctl_explain(const struct clockd_status *st)
{
	switch (st->state) {
	case CLOCKD_STATE_STALE:
		ctl_error("time page %s: stale (no update for %" PRId64 " ms, limit %" PRIu64 " ms): "
			  "the daemon (pid %" PRIu32 ") is alive but silent%s",
			  st->page_path, st->age_ns / 1000000, st->stale_ns / 1000000, st->pid,
			  st->errno_hint ? "" : " (fine reads are extrapolated meanwhile)");
		break;
	case CLOCKD_STATE_GONE:
		ctl_error("time page %s: gone: its daemon (pid %" PRIu32 ") exited or was killed",
			  st->page_path, st->pid);
		break;
	case CLOCKD_STATE_LIVE:
		break;
	default:
		ctl_error("time page %s: %s%s", st->page_path, ctl_strerror(st->errno_hint),
			  st->errno_hint == ENOENT ? " (is clockd running? see --page)" : "");
		break;
	}
}

int ctl_require_live(struct clockd_status *st)
{
	if (clockd_status(st, sizeof(*st)) < 0) {
		ctl_error("clockd_status: %s", ctl_strerror(errno));
		return CTL_EXIT_DAEMON;
	}
	if (st->state == CLOCKD_STATE_LIVE)
		return 0;
	ctl_explain(st);
	return CTL_EXIT_DAEMON;
}

int ctl_read_failed(int err)
{
	struct clockd_status st = { 0 };

	/* The page may have gone between the status and the read: the
	 * status taken now names the reason; if it finds the daemon live
	 * again, report the read's own errno. */
	if (clockd_status(&st, sizeof(st)) == 0 && st.state != CLOCKD_STATE_LIVE)
		ctl_explain(&st);
	else
		ctl_error("time page %s: %s", st.page_path, ctl_strerror(err));
	return CTL_EXIT_DAEMON;
}

bool ctl_cpu_online(unsigned cpu)
{
	char path[64];
	int c = '1';
	FILE *f;

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%u/online", cpu);
	f = fopen(path, "r");
	if (f) {
		c = fgetc(f);
		fclose(f);
	}
	return c != '0';
}
