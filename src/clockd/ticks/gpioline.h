/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A GPIO line's edge events through libgpiod, the one interface ticks/gpio.c
 * (and with it reference = gpio) uses. Two backends, one per libgpiod API,
 * the one configure found is built in: gpioline_v1.c (libgpiod 1.6, the v1
 * API of Debian 12) and gpioline_v2.c (libgpiod 2.x: Debian 13, Ubuntu
 * 24.04, Fedora). Both give the same names, messages and timestamps.
 *
 * Not thread-safe: one thread owns a line.
 */
#ifndef CLOCKD_GPIOLINE_H
#define CLOCKD_GPIOLINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct gpioline;

enum gpioline_edge {
	GPIOLINE_RISING = 1,
	GPIOLINE_FALLING = 2,
	GPIOLINE_BOTH = 3,
};

struct gpioline_event {
	int64_t ns;  /* the kernel's timestamp of the edge, CLOCK_MONOTONIC */
	bool rising; /* else falling */
};

/* At most this many events per gpioline_read(). */
#define GPIOLINE_EVENTS_MAX 16

/*
 * Open @chip (a chip name "gpiochip0", a number "0", a path
 * "/dev/gpiochip0" or a chip label), find @line on it (an offset or a line
 * name) and request its @edge events for @consumer, the line an input. On
 * failure NULL with errno set, after one log line that starts with @what
 * ("tick gpio") and names the chip, the line and the reason: "no such GPIO
 * chip", "no such line (the chip has N lines, 0 to N-1)", "line busy (used
 * by X)", "permission denied".
 */
struct gpioline *gpioline_open(const char *what, const char *chip, const char *line,
			       enum gpioline_edge edge, const char *consumer);
/* Release the line and close the chip; NULL is allowed. */
void gpioline_close(struct gpioline *gl);

/* A descriptor that is readable while events are pending (owned by @gl). */
int gpioline_fd(const struct gpioline *gl);
/* "gpiochip0 line 3": the chip's name and the line's offset. */
void gpioline_describe(const struct gpioline *gl, char *buf, size_t len);

/* Wait up to @timeout_ns for an event: 1 when one is pending, 0 when none
 * came in time, -1 with errno (EINTR; ENODEV when the chip went away). */
int gpioline_wait(struct gpioline *gl, int64_t timeout_ns);
/* Read the pending events, at most @max (and GPIOLINE_EVENTS_MAX), oldest
 * first: how many, or -1 with errno. Blocks while none is pending. */
int gpioline_read(struct gpioline *gl, struct gpioline_event *ev, int max);

/* The libgpiod this program runs with and its API: "1.6.3 (v1 API)". */
const char *gpioline_library(void);

#endif
