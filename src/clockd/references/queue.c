/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The reference's event queue and state, between its thread and the tick
 * thread, and the polling of a driver with no thread (reference.h). */
#include "clockd/references/reference.h"

void refqueue_push(struct reference *r, const struct ref_event *ev)
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

bool reference_poll(struct reference *r, struct clocksource *cs, int64_t now_ns, struct ref_event *ev)
{
	if (!r->name || !r->drv->sample || (r->last_poll_ns && now_ns - r->last_poll_ns < r->drv->poll_ns * 7 / 8))
		return false;
	r->last_poll_ns = now_ns;
	*ev = (struct ref_event){ 0 };
	return r->drv->sample(r, cs, ev);
}

uint32_t reference_fault(struct reference *r)
{
	return r->name ? __atomic_load_n(&r->fault, __ATOMIC_ACQUIRE) : 0;
}

void refqueue_set_fault(struct reference *r, uint32_t fault)
{
	__atomic_store_n(&r->fault, fault, __ATOMIC_RELEASE);
}

bool refqueue_stopping(struct reference *r)
{
	return __atomic_load_n(&r->stop, __ATOMIC_ACQUIRE);
}
