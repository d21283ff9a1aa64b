/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * clockctl status: everything clockd_status() reports. The report is
 * printed whatever the state; the exit status says whether the daemon is
 * live (0) or not (1, with the reason on stderr), as every verb that
 * reads the daemon says it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <clockd/page.h>

#include "clockctl/clockctl.h"

static const struct {
	uint32_t bit;
	const char *name;
} page_flags[] = {
	{ CLOCKD_PAGE_RUNNING, "running" },
	{ CLOCKD_PAGE_SYNCED, "synced" },
	{ CLOCKD_PAGE_FAULT, "fault" },
	{ CLOCKD_PAGE_STOPPING, "stopping" },
};
#define N_PAGE_FLAGS (sizeof(page_flags) / sizeof(page_flags[0]))

static const char *vclock_name(uint32_t mode)
{
	static const char *const names[] = {
		[CLOCKD_VCLOCK_NONE] = "none",
		[CLOCKD_VCLOCK_TSC] = "tsc",
		[CLOCKD_VCLOCK_POSIX] = "posix",
		[CLOCKD_VCLOCK_HPET] = "hpet",
		[CLOCKD_VCLOCK_PHC] = "phc",
	};

	return mode < sizeof(names) / sizeof(names[0]) ? names[mode] : "unknown";
}

/* The state in a few words, for the text report. */
static void describe_state(const struct clockd_status *st, char *buf, size_t len)
{
	switch (st->state) {
	case CLOCKD_STATE_LIVE:
		snprintf(buf, len, "a daemon owns the page and updates it");
		break;
	case CLOCKD_STATE_STALE:
		snprintf(buf, len, "no update for %" PRId64 " ms: the daemon is alive but silent",
			 st->age_ns / 1000000);
		break;
	case CLOCKD_STATE_GONE:
		snprintf(buf, len, "the daemon that wrote the page exited or was killed");
		break;
	default:
		snprintf(buf, len, "%s", ctl_strerror(st->errno_hint));
		break;
	}
}

#define FIELD(label, ...)                          \
	do {                                       \
		printf("%12s: ", label);           \
		printf(__VA_ARGS__);               \
		putchar('\n');                     \
	} while (0)

static void print_flags(uint32_t flags)
{
	uint32_t known = 0;
	const char *sep = "";

	printf("%12s: ", "flags");
	for (size_t i = 0; i < N_PAGE_FLAGS; i++) {
		known |= page_flags[i].bit;
		if (flags & page_flags[i].bit) {
			printf("%s%s", sep, page_flags[i].name);
			sep = " ";
		}
	}
	if (flags & ~known)
		printf("%s0x%" PRIx32, sep, flags & ~known);
	else if (!flags)
		printf("none");
	putchar('\n');
}

static void print_xtime(const struct clockd_status *st)
{
	char date[64] = "";
	time_t t = (time_t)st->xtime_sec;
	struct tm tm;

	if (gmtime_r(&t, &tm))
		strftime(date, sizeof(date), " (%Y-%m-%d %H:%M:%S UTC)", &tm);
	FIELD("xtime", "%" PRId64 ".%09" PRId64 "%s", st->xtime_sec, st->xtime_nsec, date);
}

const char *ctl_leap_name(const struct clockd_status *st)
{
	if (!(st->leap & CLOCKD_LEAP_KNOWN))
		return "unknown";
	switch (st->leap & CLOCKD_LEAP_MASK) {
	case CLOCKD_LEAP_NONE:
		return "none";
	case CLOCKD_LEAP_INSERT:
		return "insert";
	case CLOCKD_LEAP_DELETE:
		return "delete";
	default:
		return "unknown";
	}
}

void ctl_print_leap(const struct clockd_status *st)
{
	const char *name = ctl_leap_name(st);

	if (!(st->leap & CLOCKD_LEAP_KNOWN))
		FIELD("leap", "unknown (a daemon that does not publish it)");
	else if (strcmp(name, "none") == 0)
		FIELD("leap", "none, TAI offset %" PRId32 " s", st->tai_offset);
	else
		FIELD("leap", "%s a second at the end of the UTC day, TAI offset %" PRId32 " s", name,
		      st->tai_offset);
}

void ctl_json_add_leap(struct json_object *o, const struct clockd_status *st)
{
	json_object_object_add(o, "leap", json_object_new_string(ctl_leap_name(st)));
	json_object_object_add(o, "tai_offset", st->leap & CLOCKD_LEAP_KNOWN ? json_object_new_int(st->tai_offset)
									  : NULL);
}

static void status_text(const struct clockd_status *st)
{
	char why[128], num[32];

	describe_state(st, why, sizeof(why));
	FIELD("state", "%s (%s)", clockd_state_name(st->state), why);
	FIELD("page", "%s", st->page_path);
	if (st->state == CLOCKD_STATE_ABSENT)
		return;
	FIELD("pid", "%" PRIu32, st->pid);
	FIELD("source", "%s", st->source);
	FIELD("tick", "%s", st->tick);
	FIELD("HZ", "%" PRIu32, st->hz);
	FIELD("jiffies_64", "%" PRIu64, st->jiffies_64);
	print_xtime(st);
	FIELD("generation", "%" PRIu64, st->generation);
	FIELD("uptime", "%s s", ctl_fmt_ns(num, sizeof(num), st->uptime_ns));
	FIELD("last update", "%.3f ms ago (stale after %.3f ms, reads extrapolated for %.3f s)",
	      (double)st->age_ns / 1e6, (double)st->stale_ns / 1e6, (double)st->extrapolate_ns / 1e9);
	print_flags(st->flags);
	FIELD("vclock", "%s", vclock_name(st->vclock_mode));
	FIELD("discipline", "offset %+" PRId64 " ns, frequency %+.3f ppm", st->offset_ns,
	      (double)st->freq_ppb / 1000.0);
	ctl_print_leap(st);
}

static struct json_object *flags_json(uint32_t flags)
{
	struct json_object *o = json_object_new_object();

	for (size_t i = 0; i < N_PAGE_FLAGS; i++)
		json_object_object_add(o, page_flags[i].name,
				       json_object_new_boolean(!!(flags & page_flags[i].bit)));
	json_object_object_add(o, "raw", json_object_new_uint64(flags));
	return o;
}

static void status_json(const struct ctl *ctl, const struct clockd_status *st)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "state", json_object_new_string(clockd_state_name(st->state)));
	json_object_object_add(o, "page", json_object_new_string(st->page_path));
	if (st->state != CLOCKD_STATE_LIVE) {
		json_object_object_add(o, "errno", json_object_new_int(st->errno_hint));
		json_object_object_add(o, "error", json_object_new_string(ctl_strerror(st->errno_hint)));
	}
	if (st->state != CLOCKD_STATE_ABSENT) {
		json_object_object_add(o, "pid", json_object_new_uint64(st->pid));
		json_object_object_add(o, "source", json_object_new_string(st->source));
		json_object_object_add(o, "tick", json_object_new_string(st->tick));
		json_object_object_add(o, "hz", json_object_new_uint64(st->hz));
		json_object_object_add(o, "jiffies_64", json_object_new_uint64(st->jiffies_64));
		json_object_object_add(o, "initial_jiffies", json_object_new_uint64(st->initial_jiffies));
		json_object_object_add(o, "xtime_sec", json_object_new_int64(st->xtime_sec));
		json_object_object_add(o, "xtime_nsec", json_object_new_int64(st->xtime_nsec));
		json_object_object_add(o, "generation", json_object_new_uint64(st->generation));
		ctl_json_add_time(o, "monotonic", st->mono_ns);
		ctl_json_add_time(o, "uptime", st->uptime_ns);
		ctl_json_add_time(o, "age", st->age_ns);
		json_object_object_add(o, "stale_ns", json_object_new_uint64(st->stale_ns));
		json_object_object_add(o, "extrapolate_ns", json_object_new_uint64(st->extrapolate_ns));
		json_object_object_add(o, "flags", flags_json(st->flags));
		json_object_object_add(o, "vclock", json_object_new_string(vclock_name(st->vclock_mode)));
		json_object_object_add(o, "offset_ns", json_object_new_int64(st->offset_ns));
		json_object_object_add(o, "freq_ppb", json_object_new_int64(st->freq_ppb));
		ctl_json_add_leap(o, st);
	}
	ctl_print(ctl, o, true);
}

int verb_status(const struct ctl *ctl, int argc, char **argv)
{
	struct clockd_status st;

	if (clockd_status(&st, sizeof(st)) < 0) {
		ctl_error("clockd_status: %s", ctl_strerror(errno));
		return CTL_EXIT_DAEMON;
	}
	if (ctl->format != CTL_TEXT)
		status_json(ctl, &st);
	else
		status_text(&st);
	if (st.state == CLOCKD_STATE_LIVE)
		return CTL_EXIT_OK;
	ctl_explain(&st);
	return CTL_EXIT_DAEMON;
}
