/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * /dev/rtc0 in a real kernel: it opens, reads the time, and a 64 Hz
 * periodic interrupt (RTC_IRQP_SET + RTC_PIE_ON) wakes blocking reads.
 * The rate is printed, not judged. Linked statically for the guest.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <linux/rtc.h>

#include "irqrate.h"

#define IRQ_HZ 64

static void check_periodic(int fd)
{
	double rate = 0;
	int n;

	if (!ioctl_ok(fd, RTC_IRQP_SET, IRQ_HZ, "rtc: RTC_IRQP_SET 64") ||
	    !ioctl_ok(fd, RTC_PIE_ON, 0, "rtc: RTC_PIE_ON")) {
		guest_ok(0, "rtc: periodic interrupts wake blocking reads # not enabled");
		return;
	}
	n = irq_count_reads(fd, 2.0, &rate);
	guest_note("rtc: %d reads, %.1f per second at %d Hz", n, rate, IRQ_HZ);
	guest_ok(n >= 5, "rtc: periodic interrupts wake blocking reads (%d)", n);
	ioctl(fd, RTC_PIE_OFF, 0);
}

int main(void)
{
	struct rtc_time tm;
	int fd;

	fd = open("/dev/rtc0", O_RDONLY);
	if (!guest_ok(fd >= 0, "rtc: /dev/rtc0 opens%s%s", fd < 0 ? ": " : "",
		      fd < 0 ? strerror(errno) : ""))
		return 1;
	memset(&tm, 0, sizeof tm);
	if (ioctl_ok(fd, RTC_RD_TIME, (unsigned long)&tm, "rtc: RTC_RD_TIME"))
		guest_note("rtc: %04d-%02d-%02d %02d:%02d:%02d", tm.tm_year + 1900,
			   tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
	check_periodic(fd);
	close(fd);
	return 0;
}
