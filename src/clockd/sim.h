/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the simulated device (sim.c) takes from the configuration: the
 * same for its three roles, a clocksource, a tick device and a reference.
 */
#ifndef CLOCKD_SIM_H
#define CLOCKD_SIM_H

#include <stdint.h>

struct sim_params {
	const char *script;  /* sim_script (shared/simscript.h) */
	int64_t rate_ppm;    /* sim_rate_ppm: off the kernel's clock */
	uint64_t jitter_ns;  /* sim_jitter_ns: of each pulse */
	uint64_t seed;       /* sim_seed: of the jitter */
};

#endif
