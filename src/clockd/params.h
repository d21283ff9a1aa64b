/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The configuration, cut into what each module takes (chrony's
 * RCL_GetDriverOption): main.c builds these once, and no module below it
 * sees struct clockd_config. The strings point into the configuration,
 * which lives as long as the daemon.
 */
#ifndef CLOCKD_PARAMS_H
#define CLOCKD_PARAMS_H

#include "clockd/devices.h"
#include "clockd/discipline.h"
#include "clockd/export.h"
#include "clockd/references/reference.h"
#include "clockd/tickthread.h"
#include "clockd/timekeeper.h"
#include "shared/config.h"

struct clockd_params {
	struct devices_params devices;
	struct tk_params tk;
	struct tickthread_params tickthread;
	struct ref_params ref;
	struct discipline_params disc;
	struct export_params ex;
};

void params_from_config(const struct clockd_config *cfg, struct clockd_params *p);

#endif
