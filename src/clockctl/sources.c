/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * clockctl sources: the daemon's clocksources, tick devices and reference,
 * in order of preference, with their state (clockd_devices2()). The states
 * are those the daemon last published: when it is stale or gone they are
 * not current, so the verb says so and exits 1 instead.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <clockd/page.h>

#include "clockctl/clockctl.h"

static const char legend[] =
	"  ROLE      source (a clocksource), tick (a tick device) or ref (the reference)\n"
	"  NAME      driver, in order of preference within the role\n"
	"  STATE     active (in use), standby, fault (failed; see FAULT), unavailable\n"
	"  FAULT     the last fault seen: none, open, stalled, backwards, stepped,\n"
	"            gone, error\n"
	"  FAULTS    fault events since the daemon started\n"
	"  SPURIOUS  tick devices and references: pulses rejected as spurious\n"
	"  MISSED    tick devices and references: pulses that did not come\n"
	"  SINCE     time since the last change of STATE\n"
	"  DEVICE    device path or detail (- for none)\n";

static struct json_object *device_json(const struct clockd_device *d, int64_t now)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "role", json_object_new_string(clockd_device_role_name(d->role)));
	json_object_object_add(o, "name", json_object_new_string(d->name));
	json_object_object_add(o, "state", json_object_new_string(clockd_device_state_name(d->state)));
	json_object_object_add(o, "fault", json_object_new_string(clockd_fault_name(d->fault)));
	json_object_object_add(o, "device", json_object_new_string(d->device));
	json_object_object_add(o, "faults", json_object_new_uint64(d->faults));
	json_object_object_add(o, "spurious", json_object_new_uint64(d->spurious));
	json_object_object_add(o, "missed", json_object_new_uint64(d->missed));
	ctl_json_add_time(o, "since", ctl_ns_sub(now, d->since_ns));
	return o;
}

int verb_sources(const struct ctl *ctl, int argc, char **argv)
{
	struct clockd_device dev[CLOCKD_PAGE_MAX_DEVICES];
	struct clockd_status st;
	struct timespec ts;
	int64_t now;
	int n, rc;

	(void)argc;
	(void)argv;
	rc = ctl_require_live(&st);
	if (rc)
		return rc;
	n = clockd_devices2(dev, sizeof(dev[0]), CLOCKD_PAGE_MAX_DEVICES);
	if (n < 0)
		return ctl_read_failed(errno);
	if (n > CLOCKD_PAGE_MAX_DEVICES)
		n = CLOCKD_PAGE_MAX_DEVICES;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = ctl_ts_ns(&ts);
	if (ctl->format == CTL_JSON) {
		struct json_object *o = json_object_new_object(), *arr = json_object_new_array();

		for (int i = 0; i < n; i++)
			json_object_array_add(arr, device_json(&dev[i], now));
		json_object_object_add(o, "devices", arr);
		ctl_print(ctl, o, true);
		return CTL_EXIT_OK;
	}
	if (ctl->format == CTL_CSV) {
		struct json_object *arr = json_object_new_array();

		for (int i = 0; i < n; i++)
			json_object_array_add(arr, device_json(&dev[i], now));
		ctl_print(ctl, arr, true);
		return CTL_EXIT_OK;
	}
	ctl_legend(ctl, legend);
	printf("%-6s %-8s %-11s %-9s %6s %8s %8s %10s  %s\n", "ROLE", "NAME", "STATE", "FAULT", "FAULTS",
	       "SPURIOUS", "MISSED", "SINCE", "DEVICE");
	for (int i = 0; i < n; i++) {
		char since[32];

		snprintf(since, sizeof(since), "%.1fs", (double)ctl_ns_sub(now, dev[i].since_ns) / 1e9);
		printf("%-6s %-8s %-11s %-9s %6" PRIu64 " %8" PRIu64 " %8" PRIu64 " %10s  %s\n",
		       clockd_device_role_name(dev[i].role), dev[i].name, clockd_device_state_name(dev[i].state),
		       clockd_fault_name(dev[i].fault), dev[i].faults, dev[i].spurious, dev[i].missed, since,
		       dev[i].device[0] ? dev[i].device : "-");
	}
	return CTL_EXIT_OK;
}
