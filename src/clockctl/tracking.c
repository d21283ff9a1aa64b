/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * clockctl tracking: how the clock follows its reference
 * (clockd_tracking()), after chronyc tracking. A stale or gone daemon
 * tracks nothing: the verb says so and exits 1.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include <clockd/page.h>

#include "clockctl/clockctl.h"

static const char legend[] =
	"  reference    the reference driver and its device (none: free-running)\n"
	"  state        none, unlocked, acquiring, locked or holdover; synced when locked\n"
	"  offset       estimated offset of clockd's clock to the reference (clockd - ref)\n"
	"  RMS offset   root mean square of the recent estimated offsets\n"
	"  frequency    rate correction applied (ppm; JSON and CSV: freq_ppb)\n"
	"  skew         estimated error of that frequency (ppm; skew_ppb)\n"
	"  error bound  estimated maximum error of clockd's clock\n"
	"  last update  time since the last reference event\n"
	"  leap         a leap second announced by the kernel for the end of the UTC\n"
	"               day (insert, delete or none) and the TAI offset (TAI - UTC)\n";

/* "none" for no reference, as everywhere else a name is absent. */
static const char *reference_name(const struct clockd_tracking *t)
{
	return t->reference[0] ? t->reference : "none";
}

static void tracking_json(const struct ctl *ctl, const struct clockd_tracking *t, const struct clockd_status *st)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "reference", json_object_new_string(reference_name(t)));
	json_object_object_add(o, "device", json_object_new_string(t->device));
	json_object_object_add(o, "state", json_object_new_string(clockd_disc_state_name(t->state)));
	json_object_object_add(o, "synced", json_object_new_boolean(t->synced));
	json_object_object_add(o, "offset_ns", json_object_new_int64(t->offset_ns));
	json_object_object_add(o, "rms_offset_ns", json_object_new_int64(t->rms_offset_ns));
	json_object_object_add(o, "freq_ppb", json_object_new_int64(t->freq_ppb));
	json_object_object_add(o, "skew_ppb", json_object_new_int64(t->skew_ppb));
	json_object_object_add(o, "error_bound_ns", json_object_new_uint64(t->error_bound_ns));
	if (t->since_event_ns < 0) {
		json_object_object_add(o, "last_update_sec", NULL);
		json_object_object_add(o, "last_update_nsec", NULL);
	} else {
		ctl_json_add_time(o, "last_update", t->since_event_ns);
	}
	ctl_json_add_leap(o, st);
	ctl_print(ctl, o, true);
}

int verb_tracking(const struct ctl *ctl, int argc, char **argv)
{
	struct clockd_tracking t;
	struct clockd_status st;
	int rc;

	(void)argc;
	(void)argv;
	rc = ctl_require_live(&st);
	if (rc)
		return rc;
	if (clockd_tracking(&t, sizeof(t)) < 0)
		return ctl_read_failed(errno);
	if (ctl->format != CTL_TEXT) {
		tracking_json(ctl, &t, &st);
		return CTL_EXIT_OK;
	}
	ctl_legend(ctl, legend);
	printf("   reference: %s%s%s\n", reference_name(&t), t.device[0] ? " " : "", t.device);
	printf("       state: %s%s\n", clockd_disc_state_name(t.state), t.synced ? " (synced)" : "");
	printf("      offset: %+" PRId64 " ns\n", t.offset_ns);
	printf("  RMS offset: %" PRId64 " ns\n", t.rms_offset_ns);
	printf("   frequency: %+.3f ppm\n", (double)t.freq_ppb / 1000.0);
	printf("        skew: %.3f ppm\n", (double)t.skew_ppb / 1000.0);
	printf(" error bound: %" PRIu64 " ns\n", t.error_bound_ns);
	if (t.since_event_ns < 0)
		printf(" last update: never\n");
	else
		printf(" last update: %.3f s ago\n", (double)t.since_event_ns / 1e9);
	ctl_print_leap(&st);
	return CTL_EXIT_OK;
}
