/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The names of the page's states and faults (since 0.4): the tables of
 * shared/devnames.h, which the daemon logs with, so a name reads the same
 * in the journal and in clockctl.
 */
#include "libclockd/internal.h"
#include "shared/devnames.h"

CLOCKD_EXPORT const char *clockd_state_name(uint32_t state)
{
	static const char *const names[] = {
		[CLOCKD_STATE_ABSENT] = "absent",
		[CLOCKD_STATE_LIVE] = "live",
		[CLOCKD_STATE_STALE] = "stale",
		[CLOCKD_STATE_GONE] = "gone",
	};

	return DEVNAME(names, state);
}

CLOCKD_EXPORT const char *clockd_device_role_name(uint32_t role)
{
	return dev_role_name(role);
}

CLOCKD_EXPORT const char *clockd_device_state_name(uint32_t state)
{
	return dev_state_name(state);
}

CLOCKD_EXPORT const char *clockd_fault_name(uint32_t fault)
{
	return dev_fault_name(fault);
}

CLOCKD_EXPORT const char *clockd_disc_state_name(uint32_t state)
{
	return disc_state_name(state);
}
