/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Count the periodic interrupts a character device reports through
 * blocking reads (/dev/hpet and /dev/rtc0 both return an unsigned long
 * per read). poll() with a deadline first, so a device that never fires
 * ends the count instead of hanging the guest.
 */
#ifndef CLOCKD_TESTS_VM_IRQRATE_H
#define CLOCKD_TESTS_VM_IRQRATE_H

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "guest.h"

/* One ioctl reported as a check, with the error when it fails. */
static inline int ioctl_ok(int fd, unsigned long req, unsigned long arg, const char *what)
{
	int err = ioctl(fd, req, arg) == 0 ? 0 : errno;

	return guest_ok(err == 0, "%s%s%s", what, err ? ": " : "", err ? strerror(err) : "");
}

/* Reads completed during about "seconds"; *rate gets reads per second. */
static inline int irq_count_reads(int fd, double seconds, double *rate)
{
	double start = guest_now(), now = start;
	int reads = 0;

	while (now - start < seconds) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		unsigned long data;

		if (poll(&p, 1, 1000) != 1)
			break;
		if (read(fd, &data, sizeof data) != (ssize_t)sizeof data)
			break;
		reads++;
		now = guest_now();
	}
	now = guest_now();
	*rate = now > start ? reads / (now - start) : 0;
	return reads;
}

#endif
