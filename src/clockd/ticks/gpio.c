/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * gpio: edges on a GPIO line (an external oscillator, a PPS signal) through
 * libgpiod, 1.6 (the v1 API Debian 12 ships) or 2.x, whichever configure
 * found (gpioline.h: one backend file per API). Self-paced: each accepted
 * edge is one tick, and td->stamp_ns is the kernel's timestamp of the last
 * one (CLOCK_MONOTONIC since Linux 5.7), not the time the daemon read it.
 *
 * Debounce: libgpiod 1.6 cannot ask the kernel for one (the v2 uAPI's
 * debounce_period_us is not reachable through the v1 API), so, with either
 * library alike, it is done here on the kernel timestamps: an edge less
 * than gpio_debounce_us after the last accepted edge is dropped.
 */
#ifdef HAVE_LIBGPIOD
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clockd/ticks/gpioline.h"
#include "clockd/ticks/tick.h"
#include "shared/log.h"
#include "shared/tickmath.h"

#define GPIO_CONSUMER "clockd"

struct gpio_state {
	struct gpioline *line;
	int64_t debounce_ns;
	int64_t last_ns; /* kernel stamp of the last accepted edge, 0: none */
};

static enum gpioline_edge gpio_edge(const char *edge)
{
	if (strcmp(edge, "falling") == 0)
		return GPIOLINE_FALLING;
	if (strcmp(edge, "both") == 0)
		return GPIOLINE_BOTH;
	return GPIOLINE_RISING;
}

static int gpio_tick_init(struct tick_device *td, const struct tick_params *p)
{
	struct gpio_state *st = calloc(1, sizeof(*st));

	if (!st) {
		log_warn("tick gpio");
		return -1;
	}
	st->line = gpioline_open("tick gpio", p->gpio.chip, p->gpio.line,
				 gpio_edge(p->gpio.edge), GPIO_CONSUMER);
	if (!st->line) {
		free(st);
		return -1;
	}
	st->debounce_ns = (int64_t)p->gpio.debounce_us * 1000;
	td->fd = gpioline_fd(st->line);
	td->self_paced = true;
	gpioline_describe(st->line, td->device, sizeof(td->device));
	td->priv = st;
	return 0;
}

/* The edges in @ev that pass the debounce: the tick count. */
static int64_t gpio_accept(struct tick_device *td, struct gpio_state *st,
			   const struct gpioline_event *ev, int n)
{
	int64_t ticks = 0;

	for (int i = 0; i < n; i++) {
		int64_t t = ev[i].ns;

		if (st->last_ns != 0 && t - st->last_ns < st->debounce_ns)
			continue;
		st->last_ns = t;
		ticks++;
	}
	if (ticks)
		td->stamp_ns = st->last_ns;
	return ticks;
}

static int64_t gpio_tick_wait(struct tick_device *td, int64_t deadline_ns)
{
	struct gpio_state *st = td->priv;
	struct gpioline_event ev[GPIOLINE_EVENTS_MAX];
	int64_t end = kclock_ns(CLOCK_MONOTONIC) + td->stall_ns, left, ticks;
	int r;

	(void)deadline_ns;
	/* Edges dropped by the debounce are no tick: wait on, to the same end. */
	while ((left = end - kclock_ns(CLOCK_MONOTONIC)) > 0) {
		r = gpioline_wait(st->line, left);
		if (r == 0)
			break;
		if (r > 0)
			r = gpioline_read(st->line, ev, GPIOLINE_EVENTS_MAX);
		if (r < 0)
			return errno == EINTR ? 0 : errno == ENODEV ? TICK_GONE : TICK_ERROR;
		ticks = gpio_accept(td, st, ev, r);
		if (ticks)
			return ticks;
	}
	return TICK_STALLED;
}

static void gpio_tick_fini(struct tick_device *td)
{
	struct gpio_state *st = td->priv;

	if (!st)
		return;
	gpioline_close(st->line);
	free(st);
	td->priv = NULL;
	td->fd = -1;
}

const struct tick_ops tick_gpio = {
	.name = "gpio",
	.descr = "edges on a GPIO line (gpio_chip, gpio_line, gpio_edge) through libgpiod",
	.init = gpio_tick_init,
	.wait = gpio_tick_wait,
	.fini = gpio_tick_fini,
};
#endif
