/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The configuration, cut into what each module takes (chrony's
 * RCL_GetDriverOption): main.c has them built once, and no module below
 * it sees struct clockd_config. The strings point into the configuration,
 * which lives as long as the daemon. What the configuration does not say
 * main.c fills in: the timer bases' clock and CPU mask, the control
 * socket's path, whether it owns it, and the stats group's id.
 */
#ifndef CLOCKD_PARAMS_H
#define CLOCKD_PARAMS_H

#include "clockd/ctlserver.h"
#include "clockd/devices.h"
#include "clockd/discipline.h"
#include "clockd/export.h"
#include "clockd/references/reference.h"
#include "clockd/tickthread.h"
#include "clockd/timekeeper.h"
#include "clockd/timers/timerbase.h"
#include "shared/config.h"

struct clockd_params {
	struct devices_params devices;
	struct tk_params tk;
	struct tickthread_params tickthread;
	struct ref_params ref;
	struct discipline_params disc;
	struct export_params ex;
	struct tb_params tb;
	struct ctlserver_params srv;
};

void params_from_config(const struct clockd_config *cfg, struct clockd_params *p);
/* The tick and timer threads' priorities as this process may use them
 * (rtsched_settle): after the privileges drop, before the threads start. */
void params_settle_sched(struct clockd_params *p);

#endif
