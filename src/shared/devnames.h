/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Names of the page's device and discipline states (<clockd/page.h>), as
 * the daemon logs them and libclockd returns them (clockd_fault_name() and
 * the others, which clockctl prints): one table for both.
 */
#ifndef CLOCKD_SHARED_DEVNAMES_H
#define CLOCKD_SHARED_DEVNAMES_H

#include <stdint.h>

#include <clockd/page.h>

#define DEVNAME(table, i) ((i) < sizeof(table) / sizeof(table[0]) && table[i] ? table[i] : "unknown")

static inline const char *dev_role_name(uint32_t role)
{
	static const char *const names[] = {
		[CLOCKD_DEV_SOURCE] = "source",
		[CLOCKD_DEV_TICK] = "tick",
		[CLOCKD_DEV_REFERENCE] = "ref",
	};

	return DEVNAME(names, role);
}

static inline const char *dev_state_name(uint32_t state)
{
	static const char *const names[] = {
		[CLOCKD_DEV_STANDBY] = "standby",
		[CLOCKD_DEV_ACTIVE] = "active",
		[CLOCKD_DEV_FAULT] = "fault",
		[CLOCKD_DEV_UNAVAILABLE] = "unavailable",
	};

	return DEVNAME(names, state);
}

static inline const char *dev_fault_name(uint32_t fault)
{
	static const char *const names[] = {
		[CLOCKD_FAULT_NONE] = "none",
		[CLOCKD_FAULT_OPEN] = "open",
		[CLOCKD_FAULT_STALLED] = "stalled",
		[CLOCKD_FAULT_BACKWARDS] = "backwards",
		[CLOCKD_FAULT_STEPPED] = "stepped",
		[CLOCKD_FAULT_GONE] = "gone",
		[CLOCKD_FAULT_ERROR] = "error",
	};

	return DEVNAME(names, fault);
}

static inline const char *disc_state_name(uint32_t state)
{
	static const char *const names[] = {
		[CLOCKD_DISC_NONE] = "none",
		[CLOCKD_DISC_UNLOCKED] = "unlocked",
		[CLOCKD_DISC_ACQUIRING] = "acquiring",
		[CLOCKD_DISC_LOCKED] = "locked",
		[CLOCKD_DISC_HOLDOVER] = "holdover",
	};

	return DEVNAME(names, state);
}

#endif
