/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * clockctl sources: the daemon's clocksources and tick devices, in order of
 * preference, with their state (clockd_devices()).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <clockd/page.h>

#include "clockctl/clockctl.h"
#include "shared/devnames.h"

static struct json_object *device_json(const struct clockd_device *d, int64_t now)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "role", json_object_new_string(dev_role_name(d->role)));
	json_object_object_add(o, "name", json_object_new_string(d->name));
	json_object_object_add(o, "state", json_object_new_string(dev_state_name(d->state)));
	json_object_object_add(o, "fault", json_object_new_string(dev_fault_name(d->fault)));
	json_object_object_add(o, "device", json_object_new_string(d->device));
	json_object_object_add(o, "faults", json_object_new_uint64(d->faults));
	json_object_object_add(o, "spurious", json_object_new_uint64(d->spurious));
	json_object_object_add(o, "missed", json_object_new_uint64(d->missed));
	json_object_object_add(o, "since_s",
			       json_object_new_double((double)ctl_ns_sub(now, d->since_ns) / 1e9));
	return o;
}

int verb_sources(const struct ctl *ctl, int argc, char **argv)
{
	struct clockd_device dev[CLOCKD_PAGE_MAX_DEVICES];
	struct timespec ts;
	int64_t now;
	int n;

	(void)argc;
	(void)argv;
	n = clockd_devices(dev, CLOCKD_PAGE_MAX_DEVICES);
	if (n < 0)
		return ctl_read_failed(errno);
	if (n > CLOCKD_PAGE_MAX_DEVICES)
		n = CLOCKD_PAGE_MAX_DEVICES;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = ctl_ts_ns(&ts);
	if (ctl->json) {
		struct json_object *o = json_object_new_object(), *arr = json_object_new_array();

		for (int i = 0; i < n; i++)
			json_object_array_add(arr, device_json(&dev[i], now));
		json_object_object_add(o, "devices", arr);
		ctl_json_print(o);
		return CTL_EXIT_OK;
	}
	printf("%-6s %-8s %-11s %-9s %6s %8s %8s %10s  %s\n", "ROLE", "NAME", "STATE", "FAULT", "FAULTS",
	       "SPURIOUS", "MISSED", "SINCE", "DEVICE");
	for (int i = 0; i < n; i++) {
		char since[32];

		snprintf(since, sizeof(since), "%.1fs", (double)ctl_ns_sub(now, dev[i].since_ns) / 1e9);
		printf("%-6s %-8s %-11s %-9s %6" PRIu64 " %8" PRIu64 " %8" PRIu64 " %10s  %s\n",
		       dev_role_name(dev[i].role), dev[i].name, dev_state_name(dev[i].state), dev_fault_name(dev[i].fault),
		       dev[i].faults, dev[i].spurious, dev[i].missed, since, dev[i].device[0] ? dev[i].device : "-");
	}
	return CTL_EXIT_OK;
}
