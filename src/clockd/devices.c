/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <string.h>

#include "clockd/devices.h"
#include "clockd/events.h"
#include "shared/devnames.h"
#include "shared/log.h"
#include "shared/tickmath.h"

/* Copy entry @i to the page (once attached). */
static void dev_publish(struct devices *dv, unsigned i)
{
	if (dv->pf)
		pagefile_set_device(dv->pf, i, &dv->tab[i]);
}

/* The journal fields of a device's event (events.h): its role, driver,
 * device path when it has one and, for a fault, the fault's name. */
static void dev_fields(char *f, size_t size, const char *role, const char *name, const char *device,
		       const char *fault)
{
	int n = snprintf(f, size, "CLOCKD_ROLE=%s\nCLOCKD_DRIVER=%s", role, name);

	if (device[0] && n >= 0 && (size_t)n < size)
		n += snprintf(f + n, size - (size_t)n, "\nCLOCKD_DEVICE=%s", device);
	if (fault && n >= 0 && (size_t)n < size)
		snprintf(f + n, size - (size_t)n, "\nCLOCKD_FAULT=%s", fault);
}

static void dev_set(struct devices *dv, unsigned i, uint32_t state, uint32_t fault)
{
	struct clockd_page_device *e = &dv->tab[i];

	if (state == CLOCKD_DEV_FAULT && e->state != CLOCKD_DEV_FAULT)
		e->faults++;
	e->state = state;
	if (fault != CLOCKD_FAULT_NONE)
		e->fault = fault;
	e->since_ns = kclock_ns(CLOCK_MONOTONIC);
	dev_publish(dv, i);
}

static void dev_entry(struct devices *dv, unsigned i, uint32_t role, const char *name)
{
	struct clockd_page_device *e = &dv->tab[i];

	memset(e, 0, sizeof(*e));
	memcpy(e->name, name, strnlen(name, sizeof(e->name) - 1)); /* names are short */
	e->role = role;
	e->state = CLOCKD_DEV_STANDBY;
	e->since_ns = kclock_ns(CLOCK_MONOTONIC);
}

static void set_flag_fault(struct devices *dv)
{
	dv->faulted = true;
	if (dv->pf)
		pagefile_flags_set(dv->pf, CLOCKD_PAGE_FAULT);
}

/* Build the two lists; -1 on a name with no driver. */
static int devices_list(struct devices *dv)
{
	const char *src = strcmp(dv->p.sources, "auto") == 0 ? "tsc,posix" : dv->p.sources;
	char w[32];

	for (unsigned i = 0; config_list_item(src, i, w, sizeof(w)); i++) {
		dv->src_ops[i] = clocksource_find(w);
		if (!dv->src_ops[i]) {
			log_warnx("source %s: not built into this clockd", w);
			return -1;
		}
		dev_entry(dv, dv->nsrc++, CLOCKD_DEV_SOURCE, w);
	}
	for (unsigned i = 0; config_list_item(dv->p.ticks, i, w, sizeof(w)); i++) {
		dv->tick_ops[i] = tick_find(w);
		if (!dv->tick_ops[i]) {
			log_warnx("tick %s: not built into this clockd%s", w,
				  strcmp(w, "gpio") == 0 ? " (libgpiod was missing when it was built)" : "");
			return -1;
		}
		dev_entry(dv, dv->nsrc + dv->ntick++, CLOCKD_DEV_TICK, w);
	}
	return 0;
}

/* Open sources from @from on; the first that opens is in use. */
static struct clocksource *open_source_from(struct devices *dv, unsigned from)
{
	for (unsigned i = from; i < dv->nsrc; i++) {
		if (clocksource_open(&dv->cs[i], dv->src_ops[i], &dv->p.source) == 0) {
			memcpy(dv->tab[i].device, dv->cs[i].device, sizeof(dv->tab[i].device));
			dv->tab[i].device[sizeof(dv->tab[i].device) - 1] = '\0';
			dv->src_cur = i;
			dev_set(dv, i, CLOCKD_DEV_ACTIVE, CLOCKD_FAULT_NONE);
			return &dv->cs[i];
		}
		dev_set(dv, i, CLOCKD_DEV_UNAVAILABLE, CLOCKD_FAULT_OPEN);
	}
	return NULL;
}

static struct tick_device *open_tick_from(struct devices *dv, unsigned from)
{
	for (unsigned i = from; i < dv->ntick; i++) {
		unsigned t = dv->nsrc + i;

		if (tick_open(&dv->td[i], dv->tick_ops[i], &dv->p.tick) == 0) {
			memcpy(dv->tab[t].device, dv->td[i].device, sizeof(dv->tab[t].device));
			dv->tab[t].device[sizeof(dv->tab[t].device) - 1] = '\0';
			dv->tick_cur = i;
			dev_set(dv, t, CLOCKD_DEV_ACTIVE, CLOCKD_FAULT_NONE);
			return &dv->td[i];
		}
		dev_set(dv, t, CLOCKD_DEV_UNAVAILABLE, CLOCKD_FAULT_OPEN);
	}
	return NULL;
}

int devices_open(struct devices *dv, const struct devices_params *p)
{
	memset(dv, 0, sizeof(*dv));
	dv->p = *p;
	dv->ref = -1;
	if (devices_list(dv) < 0)
		return -1;
	if (!open_source_from(dv, 0)) {
		log_warnx("source = %s: no clocksource could be opened", p->sources);
		return -1;
	}
	if (!open_tick_from(dv, 0)) {
		log_warnx("tick = %s: no tick device could be opened", p->ticks);
		clocksource_close(&dv->cs[dv->src_cur]);
		return -1;
	}
	if (dv->src_cur > 0 || dv->tick_cur > 0)
		dv->faulted = true;
	return 0;
}

static unsigned devices_count(const struct devices *dv)
{
	return dv->nsrc + dv->ntick + (dv->ref >= 0);
}

void devices_add_reference(struct devices *dv, const char *name, const char *device)
{
	unsigned i = dv->nsrc + dv->ntick;

	dev_entry(dv, i, CLOCKD_DEV_REFERENCE, name);
	memcpy(dv->tab[i].device, device, sizeof(dv->tab[i].device));
	dv->tab[i].device[sizeof(dv->tab[i].device) - 1] = '\0';
	dv->tab[i].state = CLOCKD_DEV_ACTIVE;
	dv->ref = (int)i;
}

void devices_reference_fault(struct devices *dv, uint32_t fault)
{
	struct clockd_page_device *e;
	char f[512];

	if (dv->ref < 0)
		return;
	e = &dv->tab[dv->ref];
	if (fault == CLOCKD_FAULT_NONE && e->state == CLOCKD_DEV_ACTIVE)
		return;
	if (fault != CLOCKD_FAULT_NONE && e->state == CLOCKD_DEV_FAULT && e->fault == fault)
		return;
	if (fault == CLOCKD_FAULT_NONE) {
		dev_set(dv, (unsigned)dv->ref, CLOCKD_DEV_ACTIVE, CLOCKD_FAULT_NONE);
		dev_fields(f, sizeof(f), "reference", e->name, e->device, NULL);
		log_event(LOG_NOTICE, EV_RECOVERED, f, "reference %s %s: events again", e->name, e->device);
		return;
	}
	dev_set(dv, (unsigned)dv->ref, CLOCKD_DEV_FAULT, fault);
	dev_fields(f, sizeof(f), "reference", e->name, e->device, dev_fault_name(fault));
	log_event(LOG_WARNING, EV_FAULT, f, "reference %s %s: %s", e->name, e->device,
		  fault == CLOCKD_FAULT_STALLED ? "stalled: silent for 3 s, or not advancing with the kernel's clock" :
		  fault == CLOCKD_FAULT_GONE ? "gone: the device disappeared" : "device errors");
}

void devices_attach(struct devices *dv, struct pagefile *pf)
{
	dv->pf = pf;
	pagefile_set_ndevices(pf, devices_count(dv));
	for (unsigned i = 0; i < devices_count(dv); i++)
		dev_publish(dv, i);
}

struct clocksource *devices_source(struct devices *dv)
{
	return &dv->cs[dv->src_cur];
}

struct tick_device *devices_tick(struct devices *dv)
{
	return &dv->td[dv->tick_cur];
}

struct clocksource *devices_source_fault(struct devices *dv, uint32_t fault, const char *why)
{
	unsigned i = dv->src_cur;
	struct clocksource *next;
	char f[512];

	set_flag_fault(dv);
	dev_set(dv, i, CLOCKD_DEV_FAULT, fault);
	next = open_source_from(dv, i + 1);
	dev_fields(f, sizeof(f), "source", dv->tab[i].name, dv->tab[i].device, dev_fault_name(fault));
	if (!next) {
		log_event(LOG_WARNING, EV_FAULT, f, "source %s%s%s: %s: %s; no other source is configured, readers get "
			  "ESTALE", dv->tab[i].name, dv->tab[i].device[0] ? " " : "", dv->tab[i].device,
			  dev_fault_name(fault), why);
		return NULL;
	}
	log_event(LOG_WARNING, EV_FAULT, f, "source %s%s%s: %s: %s; now on source %s", dv->tab[i].name,
		  dv->tab[i].device[0] ? " " : "", dv->tab[i].device, dev_fault_name(fault), why,
		  dv->tab[dv->src_cur].name);
	return next;
}

struct tick_device *devices_tick_fault(struct devices *dv, uint32_t fault, const char *why)
{
	unsigned i = dv->tick_cur, t = dv->nsrc + i;
	struct tick_device *next;
	char f[512];

	if (dv->tab[t].state == CLOCKD_DEV_FAULT)
		return NULL; /* already reported, nothing left to try */
	set_flag_fault(dv);
	dev_set(dv, t, CLOCKD_DEV_FAULT, fault);
	next = open_tick_from(dv, i + 1);
	dev_fields(f, sizeof(f), "tick", dv->tab[t].name, dv->tab[t].device, dev_fault_name(fault));
	if (!next) {
		log_event(LOG_WARNING, EV_FAULT, f, "tick %s%s%s: %s: %s; no other tick device is configured",
			  dv->tab[t].name, dv->tab[t].device[0] ? " " : "", dv->tab[t].device, dev_fault_name(fault),
			  why);
		return NULL;
	}
	log_event(LOG_WARNING, EV_FAULT, f, "tick %s%s%s: %s: %s; now on tick %s", dv->tab[t].name,
		  dv->tab[t].device[0] ? " " : "",
		  dv->tab[t].device, dev_fault_name(fault), why, dv->tab[dv->nsrc + dv->tick_cur].name);
	tick_close(&dv->td[i]);
	return next;
}

void devices_tick_recovered(struct devices *dv)
{
	unsigned t = dv->nsrc + dv->tick_cur;
	char f[512];

	if (dv->tab[t].state != CLOCKD_DEV_FAULT)
		return;
	dev_set(dv, t, CLOCKD_DEV_ACTIVE, CLOCKD_FAULT_NONE);
	dev_fields(f, sizeof(f), "tick", dv->tab[t].name, dv->tab[t].device, NULL);
	log_event(LOG_NOTICE, EV_RECOVERED, f, "tick %s%s%s: ticking again", dv->tab[t].name,
		  dv->tab[t].device[0] ? " " : "", dv->tab[t].device);
}

void devices_source_recovered(struct devices *dv, int64_t good_ns)
{
	unsigned i = dv->src_cur;
	char f[512];

	if (dv->tab[i].state != CLOCKD_DEV_FAULT)
		return;
	dev_set(dv, i, CLOCKD_DEV_ACTIVE, CLOCKD_FAULT_NONE);
	dev_fields(f, sizeof(f), "source", dv->tab[i].name, dv->tab[i].device, NULL);
	log_event(LOG_NOTICE, EV_RECOVERED, f,
		  "source %s%s%s: behaved for %lld s since its fault; back in use, readers served again",
		   dv->tab[i].name, dv->tab[i].device[0] ? " " : "", dv->tab[i].device,
		   (long long)(good_ns / 1000000000));
}

void devices_tick_pulses(struct devices *dv, uint64_t spurious, uint64_t missed)
{
	struct clockd_page_device *e = &dv->tab[dv->nsrc + dv->tick_cur];

	e->spurious += spurious;
	e->missed += missed;
	dev_publish(dv, dv->nsrc + dv->tick_cur);
}

void devices_close(struct devices *dv)
{
	for (unsigned i = 0; i < dv->nsrc; i++)
		clocksource_close(&dv->cs[i]);
	for (unsigned i = 0; i < dv->ntick; i++)
		tick_close(&dv->td[i]);
}
