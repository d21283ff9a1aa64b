/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The kernel's leap second state (kernel/time/ntp.c), followed for the
 * page: whether a leap second is announced for the end of the UTC day
 * (adjtimex status STA_INS / STA_DEL) and the TAI offset (adjtimex tai).
 *
 * The kernel inserts a leap second by stepping CLOCK_REALTIME back one
 * second at the first tick after midnight UTC, and raises its TAI offset
 * at the same moment; clockd's realtime follows that step a tick later.
 * So that CLOCKD_TAI (realtime + tai_offset, from one copy of the page)
 * never steps, the offset published changes with the step of clockd's own
 * realtime, not when the kernel's adjtimex says so: around an announced
 * leap (LEAP_WINDOW_NS, 5 s, either side of midnight) the state is frozen, and
 * the step of realtime by about a second across midnight is the leap.
 * Outside that window a different kernel TAI offset (someone set it with
 * ADJ_TAI) is taken as it is.
 *
 * Tick thread only (the timekeeper's update and publication); a zeroed
 * struct is the state before the first poll (nothing known).
 */
#ifndef CLOCKD_LEAP_H
#define CLOCKD_LEAP_H

#include <stdbool.h>
#include <stdint.h>

struct leap {
	bool known;          /* adjtimex answered at least once */
	uint32_t pending;    /* CLOCKD_LEAP_INSERT / _DELETE announced, or NONE */
	int64_t leap_sec;    /* the end of the UTC day it is announced for, s */
	int64_t done_sec;    /* the leap_sec of the last leap seen */
	bool wait;           /* since it: the kernel's announcement not yet */
			     /* withdrawn (its TIME_WAIT) */
	int32_t tai;         /* TAI - UTC published, s */
	int64_t last_wall_ns; /* CLOCKD_REALTIME - CLOCKD_MONOTONIC then */
	int64_t last_real_ns; /* CLOCKD_REALTIME at the last publication, 0: none */
	int64_t poll_ns;     /* kernel CLOCK_MONOTONIC of the last adjtimex */
	bool failed;         /* adjtimex failed (logged once) */
};

/* At most once a second of @kmono_ns (kernel CLOCK_MONOTONIC): read the
 * kernel's state with adjtimex, @real_ns being CLOCKD_REALTIME now. */
void leap_poll(struct leap *l, int64_t kmono_ns, int64_t real_ns);
/* At each publication, @real_ns and @mono_ns being the CLOCKD_REALTIME and
 * CLOCKD_MONOTONIC published: the page's words (data.leap, data.tai_offset). */
void leap_publish(struct leap *l, int64_t real_ns, int64_t mono_ns, uint32_t *leap_word, int32_t *tai_offset);

#endif
