/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Tick devices: what wakes the daemon to update the page, the kernel's
 * struct clock_event_device. The tick thread blocks in wait() once per
 * tick: one system call per tick, the least a daemon woken HZ times a
 * second can do. A programmable device is given each tick's deadline
 * (timerfd); a periodic one fires at its own rate (RTC, HPET, a GPIO
 * line: the devices issue).
 */
#ifndef CLOCKD_TICK_H
#define CLOCKD_TICK_H

#include <stdbool.h>
#include <stdint.h>

#include "clockd/sim.h"

struct tick_device;

/* A GPIO line's edges (the gpio tick, the gpio PPS reference). */
struct gpio_line_params {
	const char *chip;     /* /dev/gpiochipN, or a chip's name or label */
	const char *line;     /* a line number or name */
	const char *edge;     /* rising, falling or both */
	uint32_t debounce_us; /* pulses closer than this are spurious */
};

/* What the tick drivers take from the configuration (main.c fills it,
 * the reference its own). */
struct tick_params {
	uint32_t hz;             /* ticks a second */
	uint32_t stall_ticks;    /* tick periods without a tick: stalled */
	const char *hpet_device; /* hpet */
	const char *rtc_device;  /* rtc */
	struct gpio_line_params gpio;
	struct sim_params sim;
};

struct tick_ops {
	const char *name;
	const char *descr;
	/* Open the device for p->hz ticks a second. 0, or -1 after
	 * logging why. */
	int (*init)(struct tick_device *td, const struct tick_params *p);
	/*
	 * Block until the next tick. A programmable device (timerfd) fires at
	 * @deadline_ns of kernel CLOCK_MONOTONIC, the timekeeper's exact time
	 * of the next tick; a device with its own rate (self_paced) ignores
	 * it. Returns the number of ticks since the last call (>= 1; more if
	 * the device counted ticks the daemon did not see), 0 for a wake-up
	 * without a tick (EINTR), or a TICK_* code below. Called only from
	 * the tick thread. It must return 0 when a signal interrupts it
	 * (EINTR): that is how the daemon stops the thread.
	 *
	 * A self-paced device must not block longer than td->stall_ns
	 * without a tick: it returns TICK_STALLED then.
	 */
	int64_t (*wait)(struct tick_device *td, int64_t deadline_ns);
	void (*fini)(struct tick_device *td);
};

/* wait() results other than a tick count */
#define TICK_ERROR (-1)   /* a device error; the tick thread logs and retries */
#define TICK_GONE (-2)    /* the device disappeared (ENODEV and the like) */
#define TICK_STALLED (-3) /* no tick for stall_ns */

struct tick_device {
	const struct tick_ops *ops;
	int fd;
	uint32_t hz;
	bool self_paced;  /* set by init: the device keeps its own rate, and
			   * jiffies count its ticks (else they follow time) */
	int64_t stall_ns; /* set before init: stall_ticks tick periods */
	int64_t stamp_ns; /* set by wait(): kernel CLOCK_MONOTONIC of the
			   * last tick when the device stamps it (0: not) */
	char device[48];  /* device path or detail, for clockctl sources */
	void *priv;
};

extern const struct tick_ops tick_timerfd;
extern const struct tick_ops tick_hpet;
extern const struct tick_ops tick_rtc;
extern const struct tick_ops tick_gpio;
extern const struct tick_ops tick_sim;
extern const struct tick_ops *const tick_drivers[];
const struct tick_ops *tick_find(const char *name);

/*
 * For the character devices whose read() blocks until an interrupt and
 * returns an unsigned long (hpet, rtc): poll td->fd for up to td->stall_ns
 * (a read alone would block for ever on a dead timer), then read it into
 * *@data. 1 with *@data, 0 on EINTR (or a spurious wake-up), or
 * TICK_STALLED, TICK_GONE, TICK_ERROR.
 */
int64_t tick_wait_read(struct tick_device *td, unsigned long *data);

/* Open one driver into @td. 0, or -1 after logging why (naming the driver
 * and the device). */
int tick_open(struct tick_device *td, const struct tick_ops *ops, const struct tick_params *p);
void tick_close(struct tick_device *td);

#endif
