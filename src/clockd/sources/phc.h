/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The phc clocksource's cross-timestamp, for the discipline: a PTP hardware
 * clock reading and the system's CLOCK_REALTIME at the same instant.
 */
#ifndef CLOCKD_PHC_H
#define CLOCKD_PHC_H

#include <stdint.h>

#include "clockd/sources/clocksource.h"

/*
 * One (PHC, CLOCK_REALTIME) pair, both in ns, for a clocksource opened as
 * "phc". Uses the best method the device offered at init:
 * PTP_SYS_OFFSET_PRECISE (a hardware cross-timestamp), else
 * PTP_SYS_OFFSET_EXTENDED (system clock read just before and after the
 * device, the tightest of a few samples), else PTP_SYS_OFFSET (the same
 * from the interleaved readings). 0, or -1 with errno (EINVAL: @cs is not
 * a phc source).
 */
int phc_cross_timestamp(struct clocksource *cs, int64_t *phc_ns, int64_t *sys_ns);

#endif
