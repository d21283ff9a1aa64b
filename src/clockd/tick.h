/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Tick devices: what wakes the daemon to update the page, the kernel's
 * struct clock_event_device. A one-shot device is programmed with each
 * tick's deadline (timerfd); a periodic one fires at its own rate (RTC,
 * HPET, a GPIO line: the devices issue).
 */
#ifndef CLOCKD_TICK_H
#define CLOCKD_TICK_H

#include <stdbool.h>
#include <stdint.h>

#include "shared/config.h"

struct tick_device;

struct tick_ops {
	const char *name;
	const char *descr;
	bool oneshot; /* needs arm() before every tick */
	/* Open the device for @hz ticks a second. 0, or -1 after logging. */
	int (*init)(struct tick_device *td, const struct clockd_config *cfg);
	/* One-shot devices: fire at @deadline_ns of kernel CLOCK_MONOTONIC. */
	int (*arm)(struct tick_device *td, int64_t deadline_ns);
	/* After td->fd polled readable: consume the event. Returns the
	 * number of expirations (>= 1), 0 for a spurious wake-up, -1 on a
	 * device error (logged). */
	int64_t (*ack)(struct tick_device *td);
	void (*fini)(struct tick_device *td);
};

struct tick_device {
	const struct tick_ops *ops;
	int fd;      /* pollable */
	uint32_t hz;
	void *priv;
};

extern const struct tick_ops tick_timerfd;
extern const struct tick_ops *const tick_drivers[];
const struct tick_ops *tick_find(const char *name);

int tick_open(struct tick_device *td, const struct clockd_config *cfg);
void tick_close(struct tick_device *td);

#endif
