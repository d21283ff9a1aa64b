/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * clockctl metrics: the daemon's state as metrics for Prometheus, for
 * node_exporter's textfile collector (`clockctl metrics > dir/clockd.prom`)
 * or any scraper: the page (up, state, HZ, age, starts), the tracking
 * (offset, frequency, skew, bound, state), the devices (state, faults,
 * spurious and missed pulses) and, when the control socket answers, the
 * timer bases per CPU (counters and lateness quantiles).
 *
 * Two text formats, one table of families: the Prometheus text format
 * 0.0.4 (the default: what the textfile collector and `promtool check
 * metrics` read; counters named with their _total), and OpenMetrics 1.0
 * (--openmetrics: a counter family named without _total, its sample
 * with it, and the closing "# EOF").
 *
 * A daemon that is not live is metrics too: clockd_up 0 and the page's
 * state, exit 0, so a scraper sees the outage rather than stale numbers.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <clockd/page.h>

#include "clockctl/clockctl.h"

#define MAX_CPUS 64 /* timer bases asked for at most */

struct mout {
	bool om; /* OpenMetrics (else Prometheus text 0.0.4) */
};

/* "# HELP" and "# TYPE" of a family; @type "counter" takes _total on its
 * samples (and, in the Prometheus format, on the family). */
static void family(const struct mout *m, const char *name, const char *type, const char *help)
{
	const char *suffix = strcmp(type, "counter") == 0 && !m->om ? "_total" : "";

	printf("# HELP %s%s %s\n", name, suffix, help);
	printf("# TYPE %s%s %s\n", name, suffix, type);
}

/* A label value with \, " and newline escaped (names come from the page,
 * which a forged one may fill with anything). */
static void label_value(const char *v)
{
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			printf("\\%c", *v);
		else if (*v == '\n')
			printf("\\n");
		else
			putchar(*v);
	}
}

/* One sample: @name (with @suffix), labels as "key", value pairs ending
 * with NULL, then the value as printf text. */
/* The end of sample()'s label pairs: a pointer, as va_arg reads it (a bare
 * NULL may be an int 0 in a variadic call). */
#define LABELS_END ((const char *)NULL)

static void sample(const char *name, const char *suffix, const char *value, ...)
{
	const char *k;
	bool first = true;
	va_list ap;

	printf("%s%s", name, suffix);
	va_start(ap, value);
	while ((k = va_arg(ap, const char *))) {
		printf("%s%s=\"", first ? "{" : ",", k);
		label_value(va_arg(ap, const char *));
		putchar('"');
		first = false;
	}
	va_end(ap);
	printf("%s %s\n", first ? "" : "}", value);
}

static const char *num_u(char *buf, size_t len, uint64_t v)
{
	snprintf(buf, len, "%" PRIu64, v);
	return buf;
}

/* ns as seconds, exactly (no double rounding of large counts). */
static const char *num_s(char *buf, size_t len, int64_t ns)
{
	uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;

	snprintf(buf, len, "%s%" PRIu64 ".%09" PRIu64, ns < 0 ? "-" : "", a / 1000000000u, a % 1000000000u);
	return buf;
}

/* ppb as ppm, exactly. */
static const char *num_ppm(char *buf, size_t len, int64_t ppb)
{
	uint64_t a = ppb < 0 ? (uint64_t)0 - (uint64_t)ppb : (uint64_t)ppb;

	snprintf(buf, len, "%s%" PRIu64 ".%03" PRIu64, ppb < 0 ? "-" : "", a / 1000u, a % 1000u);
	return buf;
}

static void page_metrics(const struct mout *m, const struct clockd_status *st)
{
	static const uint32_t states[] = { CLOCKD_STATE_ABSENT, CLOCKD_STATE_LIVE, CLOCKD_STATE_STALE,
					   CLOCKD_STATE_GONE };
	char b[64];

	family(m, "clockd_up", "gauge", "1 when a daemon owns the time page and updates it (live)");
	sample("clockd_up", "", st->state == CLOCKD_STATE_LIVE ? "1" : "0", LABELS_END);
	family(m, "clockd_page_state", "gauge", "the page's state: 1 for the current one");
	for (size_t i = 0; i < sizeof(states) / sizeof(states[0]); i++)
		sample("clockd_page_state", "", st->state == states[i] ? "1" : "0", "state",
		       clockd_state_name(states[i]), LABELS_END);
	if (st->state == CLOCKD_STATE_ABSENT)
		return;
	family(m, "clockd_info", "gauge", "the daemon's clocksource, tick device and page (value 1)");
	sample("clockd_info", "", "1", "source", st->source, "tick", st->tick, "page", st->page_path, LABELS_END);
	family(m, "clockd_hz", "gauge", "ticks per second of jiffies_64");
	sample("clockd_hz", "", num_u(b, sizeof(b), st->hz), LABELS_END);
	family(m, "clockd_jiffies", "gauge", "jiffies_64 of the page");
	sample("clockd_jiffies", "", num_u(b, sizeof(b), st->jiffies_64), LABELS_END);
	family(m, "clockd_page_age_seconds", "gauge", "time since the page's last update");
	sample("clockd_page_age_seconds", "", num_s(b, sizeof(b), st->age_ns), LABELS_END);
	family(m, "clockd_uptime_seconds", "gauge", "time since this daemon started");
	sample("clockd_uptime_seconds", "", num_s(b, sizeof(b), st->uptime_ns), LABELS_END);
	family(m, "clockd_daemon_starts", "counter",
	       "daemon starts on this page (restarts are this minus 1; jiffies and monotonic continue)");
	sample("clockd_daemon_starts", "_total", num_u(b, sizeof(b), st->generation), LABELS_END);
	family(m, "clockd_synced", "gauge", "1 when disciplined to a locked reference (page flag SYNCED)");
	sample("clockd_synced", "", st->flags & CLOCKD_PAGE_SYNCED ? "1" : "0", LABELS_END);
	family(m, "clockd_source_fault", "gauge", "1 when the clocksource in use reports a fault");
	sample("clockd_source_fault", "", st->flags & CLOCKD_PAGE_FAULT ? "1" : "0", LABELS_END);
}

static void tracking_metrics(const struct mout *m)
{
	static const uint32_t states[] = { CLOCKD_DISC_NONE, CLOCKD_DISC_UNLOCKED, CLOCKD_DISC_ACQUIRING,
					   CLOCKD_DISC_LOCKED, CLOCKD_DISC_HOLDOVER };
	struct clockd_tracking t;
	const char *ref;
	char b[64];

	if (clockd_tracking(&t, sizeof(t)) < 0)
		return;
	ref = t.reference[0] ? t.reference : "none";
	family(m, "clockd_tracking_state", "gauge", "the discipline's state: 1 for the current one");
	for (size_t i = 0; i < sizeof(states) / sizeof(states[0]); i++)
		sample("clockd_tracking_state", "", t.state == states[i] ? "1" : "0", "reference", ref, "state",
		       clockd_disc_state_name(states[i]), LABELS_END);
	family(m, "clockd_tracking_offset_seconds", "gauge",
	       "estimated offset of clockd's clock to the reference (clockd - reference)");
	sample("clockd_tracking_offset_seconds", "", num_s(b, sizeof(b), t.offset_ns), LABELS_END);
	family(m, "clockd_tracking_rms_offset_seconds", "gauge", "RMS of the recent estimated offsets");
	sample("clockd_tracking_rms_offset_seconds", "", num_s(b, sizeof(b), t.rms_offset_ns), LABELS_END);
	family(m, "clockd_tracking_frequency_ppm", "gauge", "rate correction applied, ppm");
	sample("clockd_tracking_frequency_ppm", "", num_ppm(b, sizeof(b), t.freq_ppb), LABELS_END);
	family(m, "clockd_tracking_skew_ppm", "gauge", "estimated error of the frequency, ppm");
	sample("clockd_tracking_skew_ppm", "", num_ppm(b, sizeof(b), t.skew_ppb), LABELS_END);
	family(m, "clockd_tracking_error_bound_seconds", "gauge", "estimated maximum error of clockd's clock");
	sample("clockd_tracking_error_bound_seconds", "", num_s(b, sizeof(b), (int64_t)t.error_bound_ns), LABELS_END);
	if (t.since_event_ns >= 0) {
		family(m, "clockd_tracking_last_event_age_seconds", "gauge", "time since the last reference event");
		sample("clockd_tracking_last_event_age_seconds", "", num_s(b, sizeof(b), t.since_event_ns), LABELS_END);
	}
}

static void device_metrics(const struct mout *m)
{
	struct clockd_device dev[CLOCKD_PAGE_MAX_DEVICES];
	int n = clockd_devices2(dev, sizeof(dev[0]), CLOCKD_PAGE_MAX_DEVICES);
	char b[64];

	if (n <= 0)
		return;
	if (n > CLOCKD_PAGE_MAX_DEVICES)
		n = CLOCKD_PAGE_MAX_DEVICES;
#define DEV_LABELS(d) "role", clockd_device_role_name((d)->role), "name", (d)->name, "device", (d)->device
	family(m, "clockd_device_state", "gauge",
	       "the device's state (standby, active, fault, unavailable): 1 for the current one");
	for (int i = 0; i < n; i++)
		for (uint32_t s = CLOCKD_DEV_STANDBY; s <= CLOCKD_DEV_UNAVAILABLE; s++)
			sample("clockd_device_state", "", dev[i].state == s ? "1" : "0", DEV_LABELS(&dev[i]),
			       "state", clockd_device_state_name(s), LABELS_END);
	family(m, "clockd_device_faults", "counter", "fault events of the device since the daemon started");
	for (int i = 0; i < n; i++)
		sample("clockd_device_faults", "_total", num_u(b, sizeof(b), dev[i].faults), DEV_LABELS(&dev[i]),
		       LABELS_END);
	family(m, "clockd_device_spurious_pulses", "counter", "tick devices and references: pulses rejected");
	for (int i = 0; i < n; i++)
		sample("clockd_device_spurious_pulses", "_total", num_u(b, sizeof(b), dev[i].spurious),
		       DEV_LABELS(&dev[i]), LABELS_END);
	family(m, "clockd_device_missed_pulses", "counter", "tick devices and references: pulses that did not come");
	for (int i = 0; i < n; i++)
		sample("clockd_device_missed_pulses", "_total", num_u(b, sizeof(b), dev[i].missed),
		       DEV_LABELS(&dev[i]), LABELS_END);
#undef DEV_LABELS
}

/* The timer bases: only when the control socket answers (a user outside
 * its group gets clockd_timer_stats_up 0 and the reason as a comment). */
static void timer_metrics(const struct mout *m)
{
	struct clockd_timer_cpu_stats cs[MAX_CPUS];
	int n = clockd_timer_cpu_stats(cs, sizeof(cs[0]), MAX_CPUS);
	char b[64], cpu[16];

	family(m, "clockd_timer_stats_up", "gauge", "1 when the control socket answered the timer statistics");
	sample("clockd_timer_stats_up", "", n < 0 ? "0" : "1", LABELS_END);
	if (n < 0) {
		printf("# timer statistics: %s\n", strerror(errno));
		return;
	}
	if (n > MAX_CPUS)
		n = MAX_CPUS;
	family(m, "clockd_timer_clients", "gauge", "clients with a delivery ring on the CPU");
	for (int i = 0; i < n; i++)
		sample("clockd_timer_clients", "", num_u(b, sizeof(b), cs[i].clients), "cpu",
		       num_u(cpu, sizeof(cpu), cs[i].cpu), LABELS_END);
	family(m, "clockd_timer_pending", "gauge", "pending timers: jiffies (the wheel) or ns (precise)");
	for (int i = 0; i < n; i++) {
		num_u(cpu, sizeof(cpu), cs[i].cpu);
		sample("clockd_timer_pending", "", num_u(b, sizeof(b), cs[i].pending_jiffies), "cpu", cpu, "kind",
		       "jiffies", LABELS_END);
		sample("clockd_timer_pending", "", num_u(b, sizeof(b), cs[i].pending_ns), "cpu", cpu, "kind", "ns",
		       LABELS_END);
	}
	family(m, "clockd_timer_expiries", "counter", "expiries delivered by the CPU's timer base");
	for (int i = 0; i < n; i++)
		sample("clockd_timer_expiries", "_total", num_u(b, sizeof(b), cs[i].fired), "cpu",
		       num_u(cpu, sizeof(cpu), cs[i].cpu), LABELS_END);
	family(m, "clockd_timer_overruns", "counter", "expiries folded into overrun counts");
	for (int i = 0; i < n; i++)
		sample("clockd_timer_overruns", "_total", num_u(b, sizeof(b), cs[i].overruns), "cpu",
		       num_u(cpu, sizeof(cpu), cs[i].cpu), LABELS_END);
	family(m, "clockd_timer_lateness_seconds", "summary", "lateness of the CPU's recent expiries");
	for (int i = 0; i < n; i++) {
		num_u(cpu, sizeof(cpu), cs[i].cpu);
		sample("clockd_timer_lateness_seconds", "", num_s(b, sizeof(b), (int64_t)cs[i].late_p50_ns), "cpu",
		       cpu, "quantile", "0.5", LABELS_END);
		sample("clockd_timer_lateness_seconds", "", num_s(b, sizeof(b), (int64_t)cs[i].late_p99_ns), "cpu",
		       cpu, "quantile", "0.99", LABELS_END);
	}
	family(m, "clockd_timer_lateness_max_seconds", "gauge", "largest lateness of the CPU's recent expiries");
	for (int i = 0; i < n; i++)
		sample("clockd_timer_lateness_max_seconds", "", num_s(b, sizeof(b), (int64_t)cs[i].late_max_ns),
		       "cpu", num_u(cpu, sizeof(cpu), cs[i].cpu), LABELS_END);
	family(m, "clockd_timer_cpu_online", "gauge",
	       "1 when the CPU is online; 0: offline, its timer base runs none of its timers until it is back");
	for (int i = 0; i < n; i++)
		sample("clockd_timer_cpu_online", "", ctl_cpu_online(cs[i].cpu) ? "1" : "0", "cpu",
		       num_u(cpu, sizeof(cpu), cs[i].cpu), LABELS_END);
}

int verb_metrics(const struct ctl *ctl, int argc, char **argv)
{
	enum { OPT_OM = CTL_OPT_LONG };
	static const struct option opts[] = {
		{ "openmetrics", no_argument, NULL, OPT_OM },
		{ NULL, 0, NULL, 0 },
	};
	struct mout m = { .om = false };
	struct clockd_status st;
	int c;

	(void)ctl;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:", opts, NULL)) != -1) {
		if (c != OPT_OM)
			return ctl_option_error(argv, "metrics: ", c);
		m.om = true;
	}
	if (optind < argc)
		return ctl_usage_error("metrics: '%s': unexpected argument", argv[optind]);
	if (clockd_status(&st, sizeof(st)) < 0) {
		ctl_error("clockd_status: %s", ctl_strerror(errno));
		return CTL_EXIT_DAEMON;
	}
	page_metrics(&m, &st);
	if (st.state == CLOCKD_STATE_LIVE || st.state == CLOCKD_STATE_STALE) {
		tracking_metrics(&m);
		device_metrics(&m);
		timer_metrics(&m);
	}
	if (m.om)
		printf("# EOF\n");
	return fflush(stdout) == 0 ? CTL_EXIT_OK : CTL_EXIT_DAEMON;
}
