/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* clockctl time and jiffies: the clocks, read next to the kernel's. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include <clockd/page.h>

#include "clockctl/clockctl.h"

static const struct {
	const char *name;
	clockid_t id;     /* the clockd clock */
	clockid_t kernel; /* the kernel clock of the same kind */
} clocks[] = {
	{ "realtime", CLOCKD_REALTIME, CLOCK_REALTIME },
	{ "monotonic", CLOCKD_MONOTONIC, CLOCK_MONOTONIC },
	{ "monotonic_raw", CLOCKD_MONOTONIC_RAW, CLOCK_MONOTONIC_RAW },
	{ "realtime_coarse", CLOCKD_REALTIME_COARSE, CLOCK_REALTIME_COARSE },
	{ "monotonic_coarse", CLOCKD_MONOTONIC_COARSE, CLOCK_MONOTONIC_COARSE },
	/* Last: left out when the daemon does not publish the TAI offset. */
	{ "tai", CLOCKD_TAI, CLOCK_TAI },
};
#define N_CLOCKS (sizeof(clocks) / sizeof(clocks[0]))

struct reading {
	struct timespec ts, res, kernel;
};

/* Read clock @i and, right after, its kernel twin. 0 or an errno. */
static int read_clock(size_t i, struct reading *r)
{
	if (clockd_clock_gettime(clocks[i].id, &r->ts) < 0)
		return errno;
	clock_gettime(clocks[i].kernel, &r->kernel);
	if (clockd_clock_getres(clocks[i].id, &r->res) < 0)
		return errno;
	return 0;
}

static const char time_legend[] =
	"  CLOCK       the clockd clock (CLOCKD_REALTIME, ...)\n"
	"  VALUE       its reading, seconds.nanoseconds\n"
	"  RESOLUTION  its resolution (clockd_clock_getres)\n"
	"  KERNEL      the kernel's clock of the same kind, read right after\n"
	"  DIFFERENCE  VALUE - KERNEL\n";

/* Times as sec and nsec only (a realtime count of ns is above 2^53). */
static struct json_object *reading_json(const char *name, const struct reading *r)
{
	struct json_object *o = json_object_new_object();
	int64_t ns = ctl_ts_ns(&r->ts), kns = ctl_ts_ns(&r->kernel);

	if (name)
		json_object_object_add(o, "clock", json_object_new_string(name));
	json_object_object_add(o, "sec", json_object_new_int64(r->ts.tv_sec));
	json_object_object_add(o, "nsec", json_object_new_int64(r->ts.tv_nsec));
	json_object_object_add(o, "res_ns", json_object_new_int64(ctl_ts_ns(&r->res)));
	json_object_object_add(o, "kernel_sec", json_object_new_int64(r->kernel.tv_sec));
	json_object_object_add(o, "kernel_nsec", json_object_new_int64(r->kernel.tv_nsec));
	json_object_object_add(o, "diff_ns", json_object_new_int64(ctl_ns_sub(ns, kns)));
	return o;
}

static void reading_text(const char *name, const struct reading *r)
{
	char v[32], k[32];
	int64_t ns = ctl_ts_ns(&r->ts), kns = ctl_ts_ns(&r->kernel);

	printf("%-17s %21s %10" PRId64 " ns %21s %+12" PRId64 " ns\n", name,
	       ctl_fmt_ns(v, sizeof(v), ns), ctl_ts_ns(&r->res), ctl_fmt_ns(k, sizeof(k), kns),
	       ctl_ns_sub(ns, kns));
}

int verb_time(const struct ctl *ctl, int argc, char **argv)
{
	struct reading r[N_CLOCKS];
	struct clockd_status st;
	struct json_object *o;
	size_t n = N_CLOCKS;
	int rc, err;

	rc = ctl_require_live(&st);
	if (rc)
		return rc;
	for (size_t i = 0; i < N_CLOCKS; i++) {
		err = read_clock(i, &r[i]);
		if (err == EINVAL && clocks[i].id == CLOCKD_TAI && !(st.leap & CLOCKD_LEAP_KNOWN)) {
			n = i;
			break;
		}
		if (err)
			return ctl_read_failed(err);
	}
	if (ctl->format == CTL_JSON) {
		o = json_object_new_object();
		for (size_t i = 0; i < n; i++)
			json_object_object_add(o, clocks[i].name, reading_json(NULL, &r[i]));
		ctl_print(ctl, o, true);
		return CTL_EXIT_OK;
	}
	if (ctl->format == CTL_CSV) {
		o = json_object_new_array();
		for (size_t i = 0; i < n; i++)
			json_object_array_add(o, reading_json(clocks[i].name, &r[i]));
		ctl_print(ctl, o, true);
		return CTL_EXIT_OK;
	}
	ctl_legend(ctl, time_legend);
	printf("%-17s %21s %13s %21s %15s\n", "CLOCK", "VALUE", "RESOLUTION", "KERNEL", "DIFFERENCE");
	for (size_t i = 0; i < n; i++)
		reading_text(clocks[i].name, &r[i]);
	return CTL_EXIT_OK;
}

struct jiffies_view {
	uint64_t j64;
	uint32_t j32;
	unsigned int hz;
};

/*
 * jiffies_64 and the 32-bit jiffies come from two library calls; a tick
 * may fall between them. Bracket the 32-bit read with two 64-bit reads
 * and retry until both agree, so the two values shown belong to the same
 * tick (a tick lasts at least 1 ms: a few tries always suffice).
 */
static int read_jiffies(struct jiffies_view *v)
{
	uint64_t after;

	for (int tries = 0; tries < 100; tries++) {
		errno = 0;
		v->j64 = clockd_get_jiffies_64();
		v->j32 = clockd_jiffies();
		after = clockd_get_jiffies_64();
		if (errno)
			return errno;
		if (after == v->j64)
			break;
	}
	v->hz = clockd_hz();
	return v->hz ? 0 : (errno ? errno : ESTALE);
}

/* @ticks at @hz in seconds, a JSON number printed to the ms. */
static struct json_object *seconds_json(uint64_t ticks, unsigned int hz)
{
	double s = (double)ticks / hz;
	char text[32];

	snprintf(text, sizeof(text), "%.3f", s);
	return json_object_new_double_s(s, text);
}

int verb_jiffies(const struct ctl *ctl, int argc, char **argv)
{
	struct clockd_status st;
	struct jiffies_view v;
	struct json_object *o;
	uint64_t to_wrap, since_start_ms;
	int rc;

	rc = ctl_require_live(&st);
	if (rc)
		return rc;
	rc = read_jiffies(&v);
	if (rc)
		return ctl_read_failed(rc);
	/* Ticks left before the 32-bit view passes 0xffffffff to 0. */
	to_wrap = (uint64_t)UINT32_MAX + 1 - v.j32;
	since_start_ms = clockd_jiffies_to_msecs(v.j64 - st.initial_jiffies);
	if (ctl->format != CTL_TEXT) {
		o = json_object_new_object();
		json_object_object_add(o, "jiffies_64", json_object_new_uint64(v.j64));
		json_object_object_add(o, "jiffies_32", json_object_new_uint64(v.j32));
		json_object_object_add(o, "hz", json_object_new_uint64(v.hz));
		json_object_object_add(o, "initial_jiffies", json_object_new_uint64(st.initial_jiffies));
		json_object_object_add(o, "wraps", json_object_new_uint64(v.j64 >> 32));
		json_object_object_add(o, "ticks_to_wrap", json_object_new_uint64(to_wrap));
		json_object_object_add(o, "seconds_to_wrap", seconds_json(to_wrap, v.hz));
		json_object_object_add(o, "since_initial_ms", json_object_new_uint64(since_start_ms));
		ctl_print(ctl, o, true);
		return CTL_EXIT_OK;
	}
	printf("%16s: %" PRIu64 "\n", "jiffies_64", v.j64);
	printf("%16s: %" PRIu32 " (32-bit view, wraps: %" PRIu64 ")\n", "jiffies", v.j32, v.j64 >> 32);
	printf("%16s: %u\n", "HZ", v.hz);
	printf("%16s: %" PRIu64 " (%" PRIu64 " ms ago)\n", "initial_jiffies", st.initial_jiffies,
	       since_start_ms);
	printf("%16s: %.3f s (%" PRIu64 " ticks)\n", "next wrap in", (double)to_wrap / v.hz, to_wrap);
	return CTL_EXIT_OK;
}
