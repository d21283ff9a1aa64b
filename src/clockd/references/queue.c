/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The reference's event queue and state, between its thread and the tick
 * thread (reference.h). */
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
