/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rtc: an RTC's periodic interrupt (RTC_IRQP_SET + RTC_PIE_ON on
 * /dev/rtcN). Self-paced: jiffies count the interrupts. Each read() returns
 * an unsigned long whose low byte holds the interrupt flags and whose
 * upper bytes count the interrupts since the previous read.
 *
 * Rates are powers of two from 2 to 8192 Hz, the rule of the RTC's
 * divider (MC146818). Above /sys/class/rtc/rtcN/max_user_freq (64 by
 * default) the kernel wants CAP_SYS_RESOURCE.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <linux/rtc.h>

#include "clockd/ticks/tick.h"
#include "shared/log.h"

#define RTC_HZ_MIN 2
#define RTC_HZ_MAX 8192

static bool rtc_rate_valid(uint32_t hz)
{
	return hz >= RTC_HZ_MIN && hz <= RTC_HZ_MAX && (hz & (hz - 1)) == 0;
}

/* /sys/class/rtc/rtcN/max_user_freq of device @path (a /dev/rtc symlink
 * is resolved to its rtcN) and its value, for a message. */
static void rtc_max_freq(const char *path, char *file, size_t flen, char *val, size_t vlen)
{
	char real[PATH_MAX];
	const char *base;
	FILE *f;

	base = realpath(path, real) ? strrchr(real, '/') + 1 : "rtc0";
	snprintf(file, flen, "/sys/class/rtc/%s/max_user_freq", base);
	snprintf(val, vlen, "unknown");
	f = fopen(file, "r");
	if (!f)
		return;
	if (fscanf(f, "%15s", val) != 1)
		snprintf(val, vlen, "unknown");
	fclose(f);
}

static int rtc_open(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd >= 0)
		return fd;
	if (errno == ENOENT)
		log_warnx("tick rtc %s: no such device", path);
	else if (errno == EACCES)
		log_warnx("tick rtc %s: permission denied", path);
	else if (errno == EBUSY)
		log_warnx("tick rtc %s: in use by another program", path);
	else
		log_warn("tick rtc %s: open", path);
	return -1;
}

static int rtc_set_rate(int fd, const char *path, uint32_t hz)
{
	char file[PATH_MAX + 64], max[16];

	if (ioctl(fd, RTC_IRQP_SET, (unsigned long)hz) == 0)
		return 0;
	if (errno == EACCES || errno == EINVAL) {
		rtc_max_freq(path, file, sizeof(file), max, sizeof(max));
		log_warnx("tick rtc %s: hz %u: refused by %s (%s; its max_user_freq is %s, %s)",
			  path, hz, path, errno == EACCES ? "above the limit for this user" :
			  "invalid rate", max, file);
	} else if (errno == ENOTTY) {
		log_warnx("tick rtc %s: not an RTC", path);
	} else {
		log_warn("tick rtc %s: RTC_IRQP_SET %u", path, hz);
	}
	return -1;
}

static int rtc_tick_init(struct tick_device *td, const struct tick_params *p)
{
	const char *path = p->rtc_device;

	if (!rtc_rate_valid(p->hz)) {
		log_warnx("tick rtc %s: hz %u: unsupported rate: an RTC's periodic interrupt "
			  "runs at a power of two from %d to %d Hz", path, p->hz, RTC_HZ_MIN,
			  RTC_HZ_MAX);
		return -1;
	}
	td->fd = rtc_open(path);
	if (td->fd < 0)
		return -1;
	if (rtc_set_rate(td->fd, path, p->hz) < 0)
		goto err_close;
	if (ioctl(td->fd, RTC_PIE_ON, 0) < 0) {
		if (errno == EINVAL || errno == ENOTTY)
			log_warnx("tick rtc %s: RTC_PIE_ON: this RTC has no periodic interrupt", path);
		else
			log_warn("tick rtc %s: RTC_PIE_ON", path);
		goto err_close;
	}
	td->self_paced = true;
	snprintf(td->device, sizeof(td->device), "%.*s", (int)sizeof(td->device) - 1, path);
	return 0;

err_close:
	close(td->fd);
	td->fd = -1;
	return -1;
}

/* The driver's read() gives the interrupts since the last read in the
 * bytes above the lowest (which holds the interrupt's kind). */
static int64_t rtc_tick_wait(struct tick_device *td, int64_t deadline_ns)
{
	unsigned long data;
	int64_t r = tick_wait_read(td, &data);

	(void)deadline_ns;
	return r == 1 ? (int64_t)(data >> 8) : r;
}

static void rtc_tick_fini(struct tick_device *td)
{
	if (td->fd >= 0) {
		ioctl(td->fd, RTC_PIE_OFF, 0);
		close(td->fd);
	}
	td->fd = -1;
}

const struct tick_ops tick_rtc = {
	.name = "rtc",
	.descr = "an RTC's periodic interrupt (rtc_device, RTC_IRQP_SET), 2 to 8192 Hz, powers of two",
	.init = rtc_tick_init,
	.wait = rtc_tick_wait,
	.fini = rtc_tick_fini,
};
