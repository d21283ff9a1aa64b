/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * hpet: one HPET timer's periodic interrupt (HPET_IRQFREQ + HPET_IE_ON on
 * /dev/hpet). Self-paced: jiffies count the interrupts. A read() returns
 * the number of interrupts since the previous read, so ticks the daemon
 * slept through are still counted.
 *
 * The HPET driver gives each open file its own timer and routes its
 * interrupt; with qemu's "-machine pc" no interrupt line is free and
 * HPET_IE_ON fails with EIO ("-machine q35" works).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <linux/hpet.h>

#include "clockd/ticks/tick.h"
#include "shared/log.h"
#include "shared/tickmath.h"

#define HPET_MAX_FREQ_FILE "/proc/sys/dev/hpet/max-user-freq"

static int hpet_open(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd >= 0)
		return fd;
	if (errno == ENOENT)
		log_warnx("tick hpet %s: no such device (is the HPET driver loaded?)", path);
	else if (errno == EACCES)
		log_warnx("tick hpet %s: permission denied", path);
	else if (errno == EBUSY)
		log_warnx("tick hpet %s: every HPET timer is in use", path);
	else
		log_warn("tick hpet %s: open", path);
	return -1;
}

/* The kernel's limit for unprivileged rates, as text for a message. */
static void hpet_max_freq(char *buf, size_t len)
{
	FILE *f = fopen(HPET_MAX_FREQ_FILE, "r");

	snprintf(buf, len, "unknown");
	if (!f)
		return;
	if (fscanf(f, "%15s", buf) != 1)
		snprintf(buf, len, "unknown");
	fclose(f);
}

static int hpet_set_rate(int fd, const char *path, uint32_t hz)
{
	char max[16];

	if (ioctl(fd, HPET_IRQFREQ, (unsigned long)hz) == 0)
		return 0;
	if (errno == EINVAL || errno == EACCES) {
		hpet_max_freq(max, sizeof(max));
		log_warnx("tick hpet %s: hz %u: refused by %s (%s; its max_user_freq is %s, "
			  HPET_MAX_FREQ_FILE ")", path, hz, path, errno == EACCES ?
			  "above the limit for this user" : "invalid rate", max);
	} else {
		log_warn("tick hpet %s: HPET_IRQFREQ %u", path, hz);
	}
	return -1;
}

static int hpet_tick_init(struct tick_device *td, const struct tick_params *p)
{
	const char *path = p->hpet_device;

	td->fd = hpet_open(path);
	if (td->fd < 0)
		return -1;
	if (hpet_set_rate(td->fd, path, p->hz) < 0)
		goto err_close;
	if (ioctl(td->fd, HPET_IE_ON, 0) < 0) {
		if (errno == EIO)
			log_warnx("tick hpet %s: HPET_IE_ON: no interrupt line for this HPET timer",
				  path);
		else
			log_warn("tick hpet %s: HPET_IE_ON", path);
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

/* The driver's read() gives the interrupts since the last read. */
static int64_t hpet_tick_wait(struct tick_device *td, int64_t deadline_ns)
{
	unsigned long n;
	int64_t r = tick_wait_read(td, &n);

	(void)deadline_ns;
	return r == 1 ? (int64_t)n : r;
}

static void hpet_tick_fini(struct tick_device *td)
{
	if (td->fd >= 0) {
		ioctl(td->fd, HPET_IE_OFF, 0);
		close(td->fd);
	}
	td->fd = -1;
}

const struct tick_ops tick_hpet = {
	.name = "hpet",
	.descr = "an HPET timer's periodic interrupt (hpet_device, HPET_IRQFREQ)",
	.init = hpet_tick_init,
	.wait = hpet_tick_wait,
	.fini = hpet_tick_fini,
};
