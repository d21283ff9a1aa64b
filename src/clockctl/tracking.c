/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * clockctl tracking: how the clock follows its reference
 * (clockd_tracking()), after chronyc tracking.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include <clockd/page.h>

#include "clockctl/clockctl.h"
#include "shared/devnames.h"

static void tracking_json(const struct clockd_tracking *t)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "reference", json_object_new_string(t->reference));
	json_object_object_add(o, "device", json_object_new_string(t->device));
	json_object_object_add(o, "state", json_object_new_string(disc_state_name(t->state)));
	json_object_object_add(o, "synced", json_object_new_boolean(t->synced));
	json_object_object_add(o, "offset_ns", json_object_new_int64(t->offset_ns));
	json_object_object_add(o, "rms_offset_ns", json_object_new_int64(t->rms_offset_ns));
	json_object_object_add(o, "frequency_ppm", json_object_new_double((double)t->freq_ppb / 1000.0));
	json_object_object_add(o, "skew_ppm", json_object_new_double((double)t->skew_ppb / 1000.0));
	json_object_object_add(o, "error_bound_ns", json_object_new_uint64(t->error_bound_ns));
	json_object_object_add(o, "last_update_s", t->since_event_ns < 0 ? json_object_new_null() :
			       json_object_new_double((double)t->since_event_ns / 1e9));
	ctl_json_print(o);
}

int verb_tracking(const struct ctl *ctl, int argc, char **argv)
{
	struct clockd_tracking t;

	(void)argc;
	(void)argv;
	if (clockd_tracking(&t, sizeof(t)) < 0)
		return ctl_read_failed(errno);
	if (ctl->json) {
		tracking_json(&t);
		return CTL_EXIT_OK;
	}
	printf("   reference: %s%s%s\n", t.reference[0] ? t.reference : "none", t.device[0] ? " " : "",
	       t.device);
	printf("       state: %s%s\n", disc_state_name(t.state), t.synced ? " (synced)" : "");
	printf("      offset: %+" PRId64 " ns\n", t.offset_ns);
	printf("  RMS offset: %" PRId64 " ns\n", t.rms_offset_ns);
	printf("   frequency: %+.3f ppm\n", (double)t.freq_ppb / 1000.0);
	printf("        skew: %.3f ppm\n", (double)t.skew_ppb / 1000.0);
	printf(" error bound: %" PRIu64 " ns\n", t.error_bound_ns);
	if (t.since_event_ns < 0)
		printf(" last update: never\n");
	else
		printf(" last update: %.3f s ago\n", (double)t.since_event_ns / 1e9);
	return CTL_EXIT_OK;
}
