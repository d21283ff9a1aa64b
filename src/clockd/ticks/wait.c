/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A helper of the tick drivers whose device is a file that becomes
 * readable at each tick (hpet, rtc): tick.h, tick_wait_read. */
#include <errno.h>
#include <poll.h>
#include <unistd.h>

#include "clockd/ticks/tick.h"

int64_t tick_wait_read(struct tick_device *td, unsigned long *data)
{
	struct pollfd pfd = { .fd = td->fd, .events = POLLIN };
	int64_t ms = (td->stall_ns + 999999) / 1000000;
	ssize_t r;
	int p;

	p = poll(&pfd, 1, ms > INT32_MAX ? INT32_MAX : (int)ms);
	if (p == 0)
		return TICK_STALLED;
	if (p < 0)
		return errno == EINTR ? 0 : TICK_ERROR;
	r = read(td->fd, data, sizeof(*data));
	if (r == (ssize_t)sizeof(*data))
		return *data ? 1 : 0;
	if (r < 0 && errno == EINTR)
		return 0;
	if (r < 0 && errno == ENODEV)
		return TICK_GONE;
	return TICK_ERROR;
}
