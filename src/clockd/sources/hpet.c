/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * hpet: the HPET main counter, read through a read-only mapping of the
 * register page of /dev/hpet (CONFIG_HPET_MMAP). Clients map the same page
 * (CLOCKD_VCLOCK_HPET), so fine reads need no system call, at the cost of
 * one uncached MMIO load (~0.5-1 us on real hardware).
 *
 * The file descriptor is closed once the page is mapped: every open of
 * /dev/hpet reserves one of the few HPET timers, which tick hpet needs.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <clockd/page.h>
#include "clockd/sources/clocksource.h"
#include "shared/log.h"

/* Register offsets and bits, HPET specification 1.0a, section 2.3. */
#define HPET_MAP_LEN 4096
#define HPET_CAP 0x000            /* capabilities and ID */
#define HPET_CAP_COUNT_64 (1u << 13) /* the main counter is 64 bits wide */
#define HPET_CONF 0x010           /* general configuration */
#define HPET_CONF_ENABLE 1u       /* the main counter runs */
#define HPET_COUNTER 0x0f0
/* The specification's bounds on the counter period: at most 100 ns. */
#define HPET_PERIOD_MAX_FS 100000000ull
#define FS_PER_SEC 1000000000000000ull

static uint64_t hpet_reg(const volatile uint8_t *regs, unsigned off)
{
	return *(const volatile uint64_t *)(regs + off);
}

/* Open and map @path; NULL after logging why. */
static const volatile uint8_t *hpet_map(const char *path)
{
	void *regs;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			log_warnx("source hpet %s: no such device (is the HPET driver loaded?)", path);
		else if (errno == EACCES)
			log_warnx("source hpet %s: permission denied", path);
		else if (errno == EBUSY)
			log_warnx("source hpet %s: every HPET timer is in use", path);
		else
			log_warn("source hpet %s: open", path);
		return NULL;
	}
	regs = mmap(NULL, HPET_MAP_LEN, PROT_READ, MAP_SHARED, fd, 0);
	if (regs == MAP_FAILED) {
		if (errno == ENODEV || errno == ENOSYS || errno == EACCES || errno == EPERM)
			log_warnx("source hpet %s: mmap refused (%s): the kernel needs "
				  "CONFIG_HPET_MMAP and hpet_mmap=1", path, strerror(errno));
		else
			log_warn("source hpet %s: mmap", path);
		close(fd);
		return NULL;
	}
	close(fd);
	return regs;
}

/* The counter runs: enabled, and it moves within a millisecond (a 10 MHz
 * HPET, the slowest the specification allows, counts 10000 in that time). */
static bool hpet_running(const volatile uint8_t *regs)
{
	struct timespec ms = { 0, 1000000 };
	uint64_t c0;

	if (!(hpet_reg(regs, HPET_CONF) & HPET_CONF_ENABLE))
		return false;
	c0 = hpet_reg(regs, HPET_COUNTER);
	nanosleep(&ms, NULL);
	return hpet_reg(regs, HPET_COUNTER) != c0;
}

static int hpet_init(struct clocksource *cs, const struct source_params *p)
{
	const char *path = p->hpet_device;
	const volatile uint8_t *regs;
	uint64_t cap, period_fs;

	regs = hpet_map(path);
	if (!regs)
		return -1;
	cap = hpet_reg(regs, HPET_CAP);
	period_fs = cap >> 32;
	if (period_fs == 0 || period_fs > HPET_PERIOD_MAX_FS) {
		log_warnx("source hpet %s: not an HPET (capabilities %#llx: counter period %llu fs)",
			  path, (unsigned long long)cap, (unsigned long long)period_fs);
		goto err_unmap;
	}
	if (!hpet_running(regs)) {
		log_warnx("source hpet %s: the main counter is not running", path);
		goto err_unmap;
	}
	cs->freq_hz = (FS_PER_SEC + period_fs / 2) / period_fs;
	cs->mask = (cap & HPET_CAP_COUNT_64) ? UINT64_MAX : UINT32_MAX;
	cs->vclock_mode = CLOCKD_VCLOCK_HPET;
	snprintf(cs->vclock_path, sizeof(cs->vclock_path), "%s", path);
	snprintf(cs->device, sizeof(cs->device), "%.*s", (int)sizeof(cs->device) - 1, path);
	cs->priv = (void *)(uintptr_t)regs;
	return 0;

err_unmap:
	munmap((void *)(uintptr_t)regs, HPET_MAP_LEN);
	return -1;
}

/* The HPET cannot be unplugged: a mapped page stays readable. */
static uint64_t hpet_read(struct clocksource *cs)
{
	return hpet_reg(cs->priv, HPET_COUNTER);
}

static bool hpet_read_shared(const struct clocksource *cs, uint64_t *c)
{
	*c = hpet_reg(cs->priv, HPET_COUNTER);
	return true;
}

static void hpet_fini(struct clocksource *cs)
{
	if (cs->priv)
		munmap(cs->priv, HPET_MAP_LEN);
	cs->priv = NULL;
}

const struct clocksource_ops clocksource_hpet = {
	.name = "hpet",
	.descr = "the HPET main counter (hpet_device), mapped read-only by clients",
	.init = hpet_init,
	.read = hpet_read,
	.read_shared = hpet_read_shared,
	.fini = hpet_fini,
};
