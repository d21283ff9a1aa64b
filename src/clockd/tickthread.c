/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "clockd/rtsched.h"
#include "clockd/tickthread.h"
#include "clockd/wakeup.h"
#include "shared/log.h"
#include "shared/tickmath.h"

static bool tickthread_stopping(struct tickthread *t)
{
	return __atomic_load_n(&t->stop, __ATOMIC_ACQUIRE);
}

/* A pause of a tick period, so a broken device cannot spin the thread. */
static void tickthread_nap(struct tickthread *t)
{
	struct timespec nap = ns_to_ts((int64_t)(NSEC_PER_SEC / t->tk->hz));

	clock_nanosleep(CLOCK_MONOTONIC, 0, &nap, NULL);
}

/* The tick device in use failed: move to the next one, if any. */
static void tickthread_tick_fault(struct tickthread *t, uint32_t fault, const char *why)
{
	struct tick_device *next = devices_tick_fault(t->dv, fault, why);

	if (!next)
		return;
	tk_set_tick(t->tk, next->ops->name, next->self_paced);
	t->last_stamp_ns = 0;
	t->errors = 0;
}

static void tickthread_trouble(struct tickthread *t, int64_t code)
{
	struct tick_device *td = devices_tick(t->dv);
	char why[96];

	switch (code) {
	case TICK_STALLED:
		snprintf(why, sizeof(why), "no tick for %lld ms (stall_ticks)", (long long)(td->stall_ns / 1000000));
		tickthread_tick_fault(t, CLOCKD_FAULT_STALLED, why);
		return;
	case TICK_GONE:
		tickthread_tick_fault(t, CLOCKD_FAULT_GONE, "the device disappeared");
		break;
	default:
		if (t->errors++ == 0)
			log_warnx("tick %s: device error; retrying", td->ops->name);
		if (t->errors >= t->p.stall_ticks) {
			snprintf(why, sizeof(why), "%llu errors in a row", (unsigned long long)t->errors);
			tickthread_tick_fault(t, CLOCKD_FAULT_ERROR, why);
		}
		break;
	}
	tickthread_nap(t);
}

/*
 * Pulses of a device that time-stamps them (gpio, sim): one less than half
 * a period after the last accepted one is spurious (a glitch: not a tick);
 * one more than half a period late means pulses went missing (counted, not
 * made up: jiffies count the pulses that came). Returns the ticks to count.
 */
static int64_t tickthread_filter(struct tickthread *t, const struct tick_device *td, int64_t n)
{
	int64_t period = (int64_t)(NSEC_PER_SEC / td->hz), gap;
	uint64_t missed = 0;

	if (td->stamp_ns == 0 || n != 1)
		return n;
	if (t->last_stamp_ns == 0) {
		t->last_stamp_ns = td->stamp_ns;
		return n;
	}
	gap = td->stamp_ns - t->last_stamp_ns;
	if (gap < period / 2) {
		if (t->spurious++ == 0)
			log_notice("tick %s: a pulse %lld ns after the last one is spurious: not counted "
				   "(further ones are counted in clockctl sources)", td->ops->name, (long long)gap);
		devices_tick_pulses(t->dv, 1, 0);
		return 0;
	}
	if (gap > period + period / 2) {
		missed = (uint64_t)((gap + period / 2) / period - 1);
		if (t->missed == 0)
			log_notice("tick %s: %llu pulses missing before this one "
				   "(further ones are counted in clockctl sources)", td->ops->name,
				   (unsigned long long)missed);
		t->missed += missed;
		devices_tick_pulses(t->dv, 0, missed);
	}
	t->last_stamp_ns = td->stamp_ns;
	return n;
}

/* The source in use failed (tk->fault): move to the next one, or raise the
 * alarm when there is none. */
static void tickthread_source_fault(struct tickthread *t)
{
	struct clocksource *next = devices_source_fault(t->dv, t->tk->fault, t->tk->fault_why);

	if (next && tk_switch_source(t->tk, next) == 0)
		return;
	pagefile_alarm_raise(t->pf, CLOCKD_ALARM_SOURCE);
}

/* With the alarm raised for a source no other took over: once it has
 * behaved long enough, take it back (published first, the alarm cleared
 * after). True if it is back. */
static bool tickthread_source_probe(struct tickthread *t)
{
	if (!tk_probe_source(t->tk) || tk_switch_source(t->tk, t->tk->cs) < 0)
		return false;
	devices_source_recovered(t->dv, t->tk->probe_good_ns);
	pagefile_alarm_clear(t->pf, CLOCKD_ALARM_SOURCE);
	return true;
}

/* After an update: the reference events that came, and its silence. True
 * if an event came. */
static bool tickthread_discipline(struct tickthread *t)
{
	uint32_t fault = reference_fault(t->ref);
	struct ref_event ev;
	bool any = false;

	while (reference_pop(t->ref, &ev)) {
		discipline_event(t->disc, &ev);
		any = true;
	}
	if (reference_poll(t->ref, t->tk->cs, t->tk->kernel_mono_ns, &ev)) {
		discipline_event(t->disc, &ev);
		any = true;
	}
	discipline_check(t->disc, fault, t->tk->kernel_mono_ns);
	devices_reference_fault(t->dv, fault);
	return any;
}

/*
 * A sample for chronyd/ntpd from the update just made: after each
 * event of a hardware reference (@event), or once a second of the kernel's
 * CLOCK_MONOTONIC without one. Valid while the page has no alarm.
 */
static void tickthread_export(struct tickthread *t, bool event)
{
	int64_t clockd_ns, system_ns;
	bool valid;

	if (!t->ex)
		return;
	/* A sampled reference (the kernel's clock) has events at hundreds a
	 * second: once a second as without one. */
	if (t->ref->name && t->ref->drv->loop ? !event : t->last_export_ns != 0 &&
	    t->tk->kernel_mono_ns - t->last_export_ns < (int64_t)NSEC_PER_SEC)
		return;
	t->last_export_ns = t->tk->kernel_mono_ns;
	tk_real_pair(t->tk, &clockd_ns, &system_ns);
	valid = pagefile_alarm(t->pf) == 0;
	export_sample(t->ex, clockd_ns, system_ns, valid, t->tk->leap.pending);
}

/* After each publication of the page: the timer bases expire jiffies
 * timers, and re-compute their realtime deadlines after a step (1 ns of
 * rounding between the two clocks' fractions is not a step). */
static void tickthread_timers(struct tickthread *t)
{
	int64_t off = tk_real_offset_ns(t->tk), d = off - t->real_offset_ns;

	t->real_offset_ns = off;
	pthread_mutex_lock(&t->tb_lock);
	if (t->tb) {
		timer_bases_tick(t->tb, t->tk->jiffies);
		if (d > 1 || d < -1)
			timer_bases_clock_was_set(t->tb);
	}
	pthread_mutex_unlock(&t->tb_lock);
}

void tickthread_set_bases(struct tickthread *t, struct timer_bases *tb)
{
	pthread_mutex_lock(&t->tb_lock);
	t->tb = tb;
	pthread_mutex_unlock(&t->tb_lock);
}

static void tickthread_loop(struct tickthread *t)
{
	while (!tickthread_stopping(t)) {
		struct tick_device *td = devices_tick(t->dv);
		int64_t n = td->ops->wait(td, tk_next_tick_deadline(t->tk));

		if (n == 0)
			continue;
		if (n < 0) {
			tickthread_trouble(t, n);
			continue;
		}
		if (t->errors) {
			log_notice("tick %s: recovered after %llu errors", td->ops->name,
				   (unsigned long long)t->errors);
			t->errors = 0;
		}
		devices_tick_recovered(t->dv);
		n = tickthread_filter(t, td, n);
		if (n == 0)
			continue;
		if (tk_update(t->tk, n)) {
			tickthread_timers(t);
			tickthread_export(t, tickthread_discipline(t));
		} else if (!(pagefile_alarm(t->pf) & CLOCKD_ALARM_SOURCE)) {
			tickthread_source_fault(t);
			tickthread_timers(t);
		} else if (tickthread_source_probe(t)) {
			tickthread_timers(t);
		}
	}
}

static void *tickthread_main(void *arg)
{
	struct tickthread *t = arg;

	/* Signals are the main thread's business, but for the wake-up
	 * (wakeup.h: how tickthread_stop stops the thread). */
	wakeup_thread_mask();
	/* Default timer slack is 50 us; ticks should be on time. */
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	/* SCHED_FIFO if settled so (rtsched.h); SCHED_OTHER is no start error. */
	rtsched_apply(t->p.priority, "the tick thread");
	if (pagefile_take(t->pf) < 0) {
		t->start_error = -1;
		sem_post(&t->ready);
		return NULL;
	}
	if (t->dv->faulted)
		pagefile_flags_set(t->pf, CLOCKD_PAGE_FAULT);
	tk_update(t->tk, 0);
	t->real_offset_ns = tk_real_offset_ns(t->tk);
	sem_post(&t->ready);
	tickthread_loop(t);
	pagefile_release(t->pf);
	return NULL;
}

int tickthread_start(struct tickthread *t, const struct tickthread_params *p, const struct tickthread_parts *parts)
{
	int r;

	memset(t, 0, sizeof(*t));
	t->p = *p;
	t->dv = parts->dv;
	t->tk = parts->tk;
	t->pf = parts->pf;
	t->ref = parts->ref;
	t->disc = parts->disc;
	t->ex = parts->ex;
	pthread_mutex_init(&t->tb_lock, NULL);
	if (wakeup_install() < 0)
		return -1;
	sem_init(&t->ready, 0, 0);
	r = pthread_create(&t->thread, NULL, tickthread_main, t);
	if (r != 0) {
		errno = r;
		log_warn("cannot start the tick thread");
		return -1;
	}
	pthread_setname_np(t->thread, "clockd-tick");
	while (sem_wait(&t->ready) < 0 && errno == EINTR)
		;
	if (t->start_error < 0) {
		pthread_join(t->thread, NULL);
		return -1;
	}
	return 0;
}

void tickthread_stop(struct tickthread *t)
{
	__atomic_store_n(&t->stop, true, __ATOMIC_RELEASE);
	wakeup_join(t->thread);
	sem_destroy(&t->ready);
	pthread_mutex_destroy(&t->tb_lock);
}
