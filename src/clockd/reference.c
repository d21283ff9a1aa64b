/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <clockd/page.h>
#include "clockd/phc.h"
#include "clockd/reference.h"
#include "clockd/ticker.h"
#include "shared/log.h"
#include "shared/tickmath.h"

/* A PPS that has not pulsed for this many seconds is stalled. */
#define REF_STALL_PERIODS 3
#define REF_WAKE_SIG SIGRTMIN /* the tick thread's wake-up signal (ticker.c) */

static void ref_push(struct reference *r, const struct ref_event *ev)
{
	pthread_mutex_lock(&r->lock);
	if (r->tail - r->head == REF_QUEUE) {
		r->dropped++;
		r->head++;
	}
	r->q[r->tail++ % REF_QUEUE] = *ev;
	pthread_mutex_unlock(&r->lock);
}

bool reference_pop(struct reference *r, struct ref_event *ev)
{
	bool got = false;

	if (!r->name)
		return false;
	pthread_mutex_lock(&r->lock);
	if (r->head != r->tail) {
		*ev = r->q[r->head++ % REF_QUEUE];
		got = true;
	}
	pthread_mutex_unlock(&r->lock);
	return got;
}

uint32_t reference_fault(struct reference *r)
{
	return r->name ? __atomic_load_n(&r->fault, __ATOMIC_ACQUIRE) : 0;
}

static void ref_set_fault(struct reference *r, uint32_t fault)
{
	__atomic_store_n(&r->fault, fault, __ATOMIC_RELEASE);
}

static bool ref_stopping(struct reference *r)
{
	return __atomic_load_n(&r->stop, __ATOMIC_ACQUIRE);
}

/* A PPS: every pulse is an event at its time stamp. */
static void ref_pps_loop(struct reference *r)
{
	while (!ref_stopping(r)) {
		int64_t n = r->td.ops->wait(&r->td, 0);
		struct ref_event ev = { 0 };

		if (n > 0) {
			ev.stamp_ns = r->td.stamp_ns ? r->td.stamp_ns : kclock_ns(CLOCK_MONOTONIC);
			ref_set_fault(r, CLOCKD_FAULT_NONE);
			ref_push(r, &ev);
		} else if (n == TICK_STALLED) {
			ref_set_fault(r, CLOCKD_FAULT_STALLED);
		} else if (n == TICK_GONE) {
			ref_set_fault(r, CLOCKD_FAULT_GONE);
			return;
		} else if (n < 0) {
			struct timespec nap = { 0, 100000000 };

			ref_set_fault(r, CLOCKD_FAULT_ERROR);
			clock_nanosleep(CLOCK_MONOTONIC, 0, &nap, NULL);
		}
	}
}

/* A PHC: a cross-timestamp a second. A clock that does not move with the
 * kernel's (frozen, as qemu's e1000e clock is) is stalled. */
static void ref_phc_loop(struct reference *r)
{
	int64_t last_phc = 0, last_sys = 0;

	while (!ref_stopping(r)) {
		struct timespec sec = { 1, 0 };
		int64_t phc, sys, wall;
		struct ref_event ev;

		if (clock_nanosleep(CLOCK_MONOTONIC, 0, &sec, NULL) == EINTR)
			continue;
		if (phc_cross_timestamp(&r->cs, &phc, &sys) < 0) {
			ref_set_fault(r, errno == ENODEV ? CLOCKD_FAULT_GONE : CLOCKD_FAULT_ERROR);
			continue;
		}
		/* A reading is used only once the next shows the PHC runs:
		 * a frozen clock must not step the realtime. */
		if (!last_sys || (phc - last_phc) < (sys - last_sys) / 2) {
			if (last_sys)
				ref_set_fault(r, CLOCKD_FAULT_STALLED);
			last_phc = phc;
			last_sys = sys;
			continue;
		}
		last_phc = phc;
		last_sys = sys;
		wall = kclock_ns(CLOCK_REALTIME) - kclock_ns(CLOCK_MONOTONIC);
		ev.stamp_ns = sys - wall;
		ev.ref_real_ns = phc - r->tai_offset_ns;
		ref_set_fault(r, CLOCKD_FAULT_NONE);
		ref_push(r, &ev);
	}
}

static void *ref_main(void *arg)
{
	struct reference *r = arg;
	sigset_t mask;

	sigfillset(&mask);
	sigdelset(&mask, REF_WAKE_SIG);
	pthread_sigmask(SIG_SETMASK, &mask, NULL);
	if (strcmp(r->name, "phc") == 0)
		ref_phc_loop(r);
	else
		ref_pps_loop(r);
	return NULL;
}

int reference_open(struct reference *r, const struct clockd_config *cfg)
{
	memset(r, 0, sizeof(*r));
	if (strcmp(cfg->reference, "none") == 0)
		return 0;
	r->cfg = *cfg;
	r->cfg.hz = 1;
	r->cfg.stall_ticks = REF_STALL_PERIODS;
	pthread_mutex_init(&r->lock, NULL);
	if (strcmp(cfg->reference, "phc") == 0) {
		struct timespec tai, real;

		if (clocksource_open(&r->cs, &clocksource_phc, &r->cfg) < 0)
			goto err;
		clock_gettime(CLOCK_TAI, &tai);
		clock_gettime(CLOCK_REALTIME, &real);
		/* Whole seconds: the kernel's TAI offset (0 if never set). */
		r->tai_offset_ns = (ts_to_ns(&tai) - ts_to_ns(&real) + NSEC_PER_SEC / 2) /
				   NSEC_PER_SEC * NSEC_PER_SEC;
		memcpy(r->device, r->cs.device, sizeof(r->device));
	} else {
		const struct tick_ops *ops = tick_find(cfg->reference);

		if (strcmp(cfg->reference, "gpio") == 0) {
			snprintf(r->cfg.gpio_chip, sizeof(r->cfg.gpio_chip), "%s", cfg->pps_chip);
			snprintf(r->cfg.gpio_line, sizeof(r->cfg.gpio_line), "%s", cfg->pps_line);
			snprintf(r->cfg.gpio_edge, sizeof(r->cfg.gpio_edge), "%s", cfg->pps_edge);
			r->cfg.gpio_debounce_us = 0;
		}
		if (!ops) {
			log_warnx("reference %s: not built into this clockd", cfg->reference);
			goto err;
		}
		if (tick_open(&r->td, ops, &r->cfg) < 0)
			goto err;
		memcpy(r->device, r->td.device, sizeof(r->device));
	}
	r->name = strcmp(cfg->reference, "phc") == 0 ? "phc" : strcmp(cfg->reference, "gpio") == 0 ? "gpio" : "sim";
	log_info("reference %s %s: 1 event a second", r->name, r->device);
	return 0;
err:
	log_warnx("reference %s: cannot be opened", cfg->reference);
	pthread_mutex_destroy(&r->lock);
	return -1;
}

int reference_start(struct reference *r)
{
	int e;

	if (!r->name)
		return 0;
	e = pthread_create(&r->thread, NULL, ref_main, r);
	if (e != 0) {
		errno = e;
		log_warn("reference %s: cannot start its thread", r->name);
		return -1;
	}
	pthread_setname_np(r->thread, "clockd-ref");
	r->running = true;
	return 0;
}

void reference_stop(struct reference *r)
{
	if (!r->name || !r->running)
		return;
	__atomic_store_n(&r->stop, true, __ATOMIC_RELEASE);
	thread_wake_join(r->thread);
	r->running = false;
}

void reference_close(struct reference *r)
{
	if (!r->name)
		return;
	reference_stop(r);
	if (r->cs.ops)
		clocksource_close(&r->cs);
	if (r->td.ops)
		tick_close(&r->td);
	pthread_mutex_destroy(&r->lock);
	r->name = NULL;
}
