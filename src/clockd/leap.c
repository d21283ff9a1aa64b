/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <string.h>
#include <sys/timex.h>

#include <clockd/page.h>
#include "clockd/events.h"
#include "clockd/leap.h"
#include "shared/log.h"
#include "shared/tickmath.h"

#define DAY_S 86400
/* Around the announced midnight, this far either side (in CLOCKD_REALTIME),
 * the state is frozen: the kernel's adjtimex reports the new TAI offset
 * before its clock steps (its TIME_OOP reply), and clockd's realtime takes
 * the step a tick after the kernel's. */
#define SEC_NS ((int64_t)NSEC_PER_SEC)
#define LEAP_WINDOW_NS (5 * SEC_NS)
/* The step of the leap: a second, give or take what a step of the system
 * time within a tick may add (the kernel steps at its first tick after
 * midnight). */
#define LEAP_STEP_MIN_NS (SEC_NS / 2)
#define LEAP_STEP_MAX_NS (3 * SEC_NS / 2)

static int64_t floor_div(int64_t a, int64_t b)
{
	return a / b - (a % b < 0);
}

static bool in_window(const struct leap *l, int64_t real_ns)
{
	int64_t at = l->leap_sec * SEC_NS;

	return l->known && l->pending != CLOCKD_LEAP_NONE && l->leap_sec != l->done_sec &&
	       real_ns >= at - LEAP_WINDOW_NS - SEC_NS && real_ns <= at + LEAP_WINDOW_NS;
}

static const char *leap_name(uint32_t pending)
{
	return pending == CLOCKD_LEAP_INSERT ? "an inserted" : pending == CLOCKD_LEAP_DELETE ? "a deleted" : "no";
}

/* CLOCKD_LEAP's value (events.h). */
static const char *leap_field(uint32_t pending)
{
	return pending == CLOCKD_LEAP_INSERT ? "insert" : pending == CLOCKD_LEAP_DELETE ? "delete" : "none";
}

void leap_poll(struct leap *l, int64_t kmono_ns, int64_t real_ns)
{
	struct timex tx;
	uint32_t pending = CLOCKD_LEAP_NONE;
	int64_t day_end = (floor_div(floor_div(real_ns, SEC_NS), DAY_S) + 1) * DAY_S;
	char f[160];
	int state;

	if (l->poll_ns != 0 && kmono_ns - l->poll_ns < SEC_NS)
		return;
	l->poll_ns = kmono_ns;
	if (in_window(l, real_ns))
		return;
	memset(&tx, 0, sizeof(tx));
	state = adjtimex(&tx);
	if (state < 0) {
		if (!l->failed)
			log_warn("adjtimex: the kernel's leap second state and TAI offset are unknown");
		l->failed = true;
		l->known = false;
		return;
	}
	l->failed = false;
	if (l->known && tx.tai != l->tai) {
		snprintf(f, sizeof(f), "CLOCKD_TAI_OFFSET=%d\nCLOCKD_TAI_OFFSET_BEFORE=%d", tx.tai, l->tai);
		log_event(LOG_NOTICE, EV_LEAP, f, "the kernel's TAI offset is now %d s (was %d s); CLOCKD_TAI steps with it",
			  tx.tai, l->tai);
	}
	l->tai = tx.tai;
	/* After its leap the kernel waits (TIME_WAIT) until the announcement
	 * is withdrawn (STA_INS and STA_DEL clear) before it takes another;
	 * so does this, since an unsynchronised kernel clock (STA_UNSYNC,
	 * which its maxerror sets within a second when nobody disciplines it)
	 * answers TIME_ERROR instead of its state. */
	if (!(tx.status & (STA_INS | STA_DEL)))
		l->wait = false;
	if (!l->wait && state != TIME_WAIT && state != TIME_OOP && day_end != l->done_sec) {
		if (tx.status & STA_INS)
			pending = CLOCKD_LEAP_INSERT;
		else if (tx.status & STA_DEL)
			pending = CLOCKD_LEAP_DELETE;
	}
	if (l->known ? pending != l->pending : pending != CLOCKD_LEAP_NONE) {
		snprintf(f, sizeof(f), "CLOCKD_LEAP=%s\nCLOCKD_LEAP_AT=%lld\nCLOCKD_TAI_OFFSET=%d", leap_field(pending),
			 (long long)day_end, l->tai);
		log_event(LOG_INFO, EV_LEAP, f, "the kernel announces %s leap second at the end of the UTC day (TAI offset %d s)",
			  leap_name(pending), l->tai);
	}
	l->known = true;
	l->pending = pending;
	l->leap_sec = day_end;
}

void leap_publish(struct leap *l, int64_t real_ns, int64_t mono_ns, uint32_t *leap_word, int32_t *tai_offset)
{
	int64_t wall = real_ns - mono_ns, step = wall - l->last_wall_ns;
	char f[160];

	/* The leap is clockd's realtime stepping by a second across the
	 * announced midnight: an insertion repeats the second (step back), a
	 * deletion skips it. */
	if (l->last_real_ns != 0 && in_window(l, l->last_real_ns)) {
		bool ins = l->pending == CLOCKD_LEAP_INSERT && -step >= LEAP_STEP_MIN_NS && -step <= LEAP_STEP_MAX_NS;
		bool del = l->pending == CLOCKD_LEAP_DELETE && step >= LEAP_STEP_MIN_NS && step <= LEAP_STEP_MAX_NS;

		if (ins || del) {
			l->tai += ins ? 1 : -1;
			l->done_sec = l->leap_sec;
			l->wait = true;
			snprintf(f, sizeof(f), "CLOCKD_LEAP=%s\nCLOCKD_LEAP_AT=%lld\nCLOCKD_STEP_NS=%lld\nCLOCKD_TAI_OFFSET=%d",
				 ins ? "insert" : "delete", (long long)l->leap_sec, (long long)step, l->tai);
			log_event(LOG_NOTICE, EV_STEP, f,
				  "leap second %s at %lld: CLOCKD_REALTIME stepped by %+lld ns, TAI offset now %d s",
				  ins ? "inserted" : "deleted", (long long)l->leap_sec, (long long)step, l->tai);
			l->pending = CLOCKD_LEAP_NONE;
		}
	}
	l->last_wall_ns = wall;
	l->last_real_ns = real_ns;
	*leap_word = l->known ? CLOCKD_LEAP_KNOWN | l->pending : 0;
	*tai_offset = l->known ? l->tai : 0;
}
