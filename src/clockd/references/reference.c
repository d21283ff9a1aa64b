/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The reference: its driver table and thread (reference.h). */
#include <errno.h>
#include <string.h>

#include "clockd/references/reference.h"
#include "clockd/wakeup.h"
#include "shared/log.h"

const struct ref_driver *const reference_drivers[] = {
#ifdef HAVE_LIBGPIOD
	/* On a GPIO line through libgpiod (ticks/gpio.c): built with it. */
	&ref_gpio,
#endif
	&ref_phc,
	&ref_kpps,
	&ref_sim,
	&ref_system,
	NULL,
};

static const struct ref_driver *ref_find(const char *name)
{
	for (unsigned i = 0; reference_drivers[i]; i++)
		if (strcmp(reference_drivers[i]->name, name) == 0)
			return reference_drivers[i];
	return NULL;
}

static void *ref_main(void *arg)
{
	struct reference *r = arg;

	wakeup_thread_mask();
	r->drv->loop(r);
	return NULL;
}

int reference_open(struct reference *r, const struct ref_params *p)
{
	const struct ref_driver *drv;

	memset(r, 0, sizeof(*r));
	if (strcmp(p->name, "none") == 0)
		return 0;
	drv = ref_find(p->name);
	if (!drv) {
		log_warnx("reference %s: not built into this clockd", p->name);
		return -1;
	}
	pthread_mutex_init(&r->lock, NULL);
	if (drv->open(r, p) < 0) {
		log_warnx("reference %s: cannot be opened", p->name);
		pthread_mutex_destroy(&r->lock);
		return -1;
	}
	r->drv = drv;
	r->name = drv->name;
	if (drv->sample)
		log_info("reference %s %s: sampled every %lld ms", r->name, r->device,
			 (long long)(drv->poll_ns / 1000000));
	else
		log_info("reference %s %s: 1 event a second", r->name, r->device);
	return 0;
}

int reference_start(struct reference *r)
{
	int e;

	if (!r->name || !r->drv->loop)
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
	wakeup_join(r->thread);
	r->running = false;
}

void reference_close(struct reference *r)
{
	if (!r->name)
		return;
	reference_stop(r);
	r->drv->close(r);
	pthread_mutex_destroy(&r->lock);
	r->name = NULL;
}
