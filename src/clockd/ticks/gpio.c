/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * gpio: edges on a GPIO line (an external oscillator, a PPS signal) through
 * libgpiod 1.6 (the v1 API Debian 12 ships). Self-paced: each accepted
 * edge is one tick, and td->stamp_ns is the kernel's timestamp of the last
 * one (CLOCK_MONOTONIC since Linux 5.7), not the time the daemon read it.
 *
 * Debounce: libgpiod 1.6 cannot ask the kernel for one (the v2 uAPI's
 * debounce_period_us is not reachable through the v1 API), so it is done
 * here on the kernel timestamps: an edge less than gpio_debounce_us after
 * the last accepted edge is dropped.
 */
#ifdef HAVE_LIBGPIOD
#include <errno.h>
#include <gpiod.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clockd/ticks/tick.h"
#include "shared/log.h"
#include "shared/tickmath.h"

#define GPIO_CONSUMER "clockd"
#define GPIO_EVENTS_MAX 16

struct gpio_state {
	struct gpiod_chip *chip;
	struct gpiod_line *line;
	int64_t debounce_ns;
	int64_t last_ns; /* kernel stamp of the last accepted edge, 0: none */
};

static struct gpiod_chip *gpio_open_chip(const char *name)
{
	struct gpiod_chip *chip = gpiod_chip_open_lookup(name);

	if (chip)
		return chip;
	if (errno == EACCES)
		log_warnx("tick gpio %s: permission denied", name);
	else
		log_warnx("tick gpio %s: no such GPIO chip (name, number, path or label)", name);
	return NULL;
}

/* gpio_line: an offset on the chip, or a line name. */
static struct gpiod_line *gpio_find_line(struct gpiod_chip *chip, const char *chipname,
					 const char *spec)
{
	unsigned int n = gpiod_chip_num_lines(chip);
	struct gpiod_line *line;
	unsigned long off;
	char *end;

	errno = 0;
	off = strtoul(spec, &end, 10);
	if (*spec >= '0' && *spec <= '9' && *end == '\0' && errno == 0) {
		if (off >= n) {
			log_warnx("tick gpio %s line %s: no such line (the chip has %u lines, 0 to %u)",
				  chipname, spec, n, n - 1);
			return NULL;
		}
		line = gpiod_chip_get_line(chip, (unsigned int)off);
	} else {
		line = gpiod_chip_find_line(chip, spec);
	}
	if (!line)
		log_warnx("tick gpio %s line %s: no such line", chipname, spec);
	return line;
}

static int gpio_request(struct gpiod_line *line, const char *edge)
{
	if (strcmp(edge, "falling") == 0)
		return gpiod_line_request_falling_edge_events(line, GPIO_CONSUMER);
	if (strcmp(edge, "both") == 0)
		return gpiod_line_request_both_edges_events(line, GPIO_CONSUMER);
	return gpiod_line_request_rising_edge_events(line, GPIO_CONSUMER);
}

static int gpio_tick_init(struct tick_device *td, const struct tick_params *p)
{
	struct gpio_state *st = calloc(1, sizeof(*st));

	if (!st) {
		log_warn("tick gpio");
		return -1;
	}
	st->chip = gpio_open_chip(p->gpio.chip);
	if (!st->chip)
		goto err_free;
	st->line = gpio_find_line(st->chip, p->gpio.chip, p->gpio.line);
	if (!st->line)
		goto err_close_chip;
	if (gpio_request(st->line, p->gpio.edge) < 0) {
		if (errno == EBUSY)
			log_warnx("tick gpio %s line %s: line busy (used by %s)", p->gpio.chip,
				  p->gpio.line, gpiod_line_consumer(st->line) ?
				  gpiod_line_consumer(st->line) : "another program");
		else
			log_warn("tick gpio %s line %s: edge events request", p->gpio.chip,
				 p->gpio.line);
		goto err_close_chip;
	}
	st->debounce_ns = (int64_t)p->gpio.debounce_us * 1000;
	td->fd = gpiod_line_event_get_fd(st->line);
	td->self_paced = true;
	snprintf(td->device, sizeof(td->device), "%s line %u", gpiod_chip_name(st->chip),
		 gpiod_line_offset(st->line));
	td->priv = st;
	return 0;

err_close_chip:
	gpiod_chip_close(st->chip);
err_free:
	free(st);
	return -1;
}

/* The edges in @ev that pass the debounce: the tick count. */
static int64_t gpio_accept(struct tick_device *td, struct gpio_state *st,
			   const struct gpiod_line_event *ev, int n)
{
	int64_t ticks = 0;

	for (int i = 0; i < n; i++) {
		int64_t t = ts_to_ns(&ev[i].ts);

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
	struct gpiod_line_event ev[GPIO_EVENTS_MAX];
	int64_t end = kclock_ns(CLOCK_MONOTONIC) + td->stall_ns, left, ticks;
	struct timespec timeout;
	int r;

	(void)deadline_ns;
	/* Edges dropped by the debounce are no tick: wait on, to the same end. */
	while ((left = end - kclock_ns(CLOCK_MONOTONIC)) > 0) {
		timeout = ns_to_ts(left);
		r = gpiod_line_event_wait(st->line, &timeout);
		if (r == 0)
			break;
		if (r < 0)
			return errno == EINTR ? 0 : errno == ENODEV ? TICK_GONE : TICK_ERROR;
		r = gpiod_line_event_read_multiple(st->line, ev, GPIO_EVENTS_MAX);
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
	gpiod_line_release(st->line);
	gpiod_chip_close(st->chip);
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
