/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * phc: a PTP hardware clock (/dev/ptpN) as a dynamic POSIX clock,
 * clock_gettime(FD_TO_CLOCKID(fd)), in ns: the clock ptp4l keeps on network
 * time. Clients open the same device read-only and read it the same way
 * (CLOCKD_VCLOCK_PHC): one system call per fine read, but no round trip to
 * the daemon.
 *
 * A NIC that is unplugged (or whose driver is unbound) leaves the file
 * open but the clock gone: clock_gettime then fails with ENODEV (or EINVAL
 * or EBADF on older kernels), and cs->gone moves the daemon on.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>
#include <linux/ptp_clock.h>

#include <clockd/page.h>
#include "clockd/sources/clocksource.h"
#include "clockd/sources/phc.h"
#include "shared/log.h"
#include "shared/tickmath.h"

/* The kernel's encoding of a dynamic clock id (posix-timers.h). */
#define FD_TO_CLOCKID(fd) ((clockid_t)((((unsigned int)~(fd)) << 3) | 3))
#define PHC_SAMPLES 5

enum phc_method { PHC_NONE, PHC_BASIC, PHC_EXTENDED, PHC_PRECISE };

static const char *const phc_method_names[] = {
	[PHC_NONE] = "none",
	[PHC_BASIC] = "PTP_SYS_OFFSET",
	[PHC_EXTENDED] = "PTP_SYS_OFFSET_EXTENDED",
	[PHC_PRECISE] = "PTP_SYS_OFFSET_PRECISE",
};

struct phc_state {
	int fd;
	clockid_t clk;
	enum phc_method method;
	uint64_t last; /* the last reading, returned once the clock is gone */
};

static int64_t ptp_ns(const struct ptp_clock_time *t)
{
	return t->sec * NSEC_PER_SEC + t->nsec;
}

static int phc_precise(int fd, int64_t *phc_ns, int64_t *sys_ns)
{
	struct ptp_sys_offset_precise p;

	memset(&p, 0, sizeof(p));
	if (ioctl(fd, PTP_SYS_OFFSET_PRECISE, &p) < 0)
		return -1;
	*phc_ns = ptp_ns(&p.device);
	*sys_ns = ptp_ns(&p.sys_realtime);
	return 0;
}

/* Of a few (system, device, system) triples, the one read fastest; the
 * system time is the middle of its bracket. */
static void phc_best(const struct ptp_clock_time *before, const struct ptp_clock_time *dev,
		     const struct ptp_clock_time *after, int64_t *best, int64_t *phc_ns,
		     int64_t *sys_ns)
{
	int64_t t0 = ptp_ns(before), t1 = ptp_ns(after);

	if (t1 - t0 < *best) {
		*best = t1 - t0;
		*phc_ns = ptp_ns(dev);
		*sys_ns = t0 + (t1 - t0) / 2;
	}
}

static int phc_extended(int fd, int64_t *phc_ns, int64_t *sys_ns)
{
	struct ptp_sys_offset_extended e;
	int64_t best = INT64_MAX;

	memset(&e, 0, sizeof(e));
	e.n_samples = PHC_SAMPLES;
	if (ioctl(fd, PTP_SYS_OFFSET_EXTENDED, &e) < 0)
		return -1;
	for (unsigned i = 0; i < e.n_samples; i++)
		phc_best(&e.ts[i][0], &e.ts[i][1], &e.ts[i][2], &best, phc_ns, sys_ns);
	return 0;
}

static int phc_basic(int fd, int64_t *phc_ns, int64_t *sys_ns)
{
	struct ptp_sys_offset b;
	int64_t best = INT64_MAX;

	memset(&b, 0, sizeof(b));
	b.n_samples = PHC_SAMPLES;
	if (ioctl(fd, PTP_SYS_OFFSET, &b) < 0)
		return -1;
	for (unsigned i = 0; i < b.n_samples; i++)
		phc_best(&b.ts[2 * i], &b.ts[2 * i + 1], &b.ts[2 * i + 2], &best, phc_ns, sys_ns);
	return 0;
}

static int phc_cross(int fd, enum phc_method m, int64_t *phc_ns, int64_t *sys_ns)
{
	switch (m) {
	case PHC_PRECISE: return phc_precise(fd, phc_ns, sys_ns);
	case PHC_EXTENDED: return phc_extended(fd, phc_ns, sys_ns);
	case PHC_BASIC: return phc_basic(fd, phc_ns, sys_ns);
	default: errno = EOPNOTSUPP; return -1;
	}
}

/* The best method this device answers, tried from the best down. */
static enum phc_method phc_probe(int fd)
{
	int64_t p, s;

	for (enum phc_method m = PHC_PRECISE; m > PHC_NONE; m--)
		if (phc_cross(fd, m, &p, &s) == 0)
			return m;
	return PHC_NONE;
}

int phc_cross_timestamp(struct clocksource *cs, int64_t *phc_ns, int64_t *sys_ns)
{
	struct phc_state *st;

	if (!cs || cs->ops != &clocksource_phc || !cs->priv) {
		errno = EINVAL;
		return -1;
	}
	st = cs->priv;
	return phc_cross(st->fd, st->method, phc_ns, sys_ns);
}

static int phc_open(const char *path)
{
	int fd = open(path, O_RDWR | O_CLOEXEC);

	/* Read-only is enough to read the clock; read-write would let the
	 * discipline adjust it later. */
	if (fd < 0 && (errno == EACCES || errno == EPERM || errno == EROFS))
		fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0)
		return fd;
	if (errno == ENOENT)
		log_warnx("source phc %s: no such device", path);
	else if (errno == EACCES)
		log_warnx("source phc %s: permission denied", path);
	else
		log_warn("source phc %s: open", path);
	return -1;
}

/* A PTP clock answers PTP_CLOCK_GETCAPS and clock_gettime. */
static int phc_validate(struct phc_state *st, const char *path)
{
	struct ptp_clock_caps caps;
	struct timespec ts;

	memset(&caps, 0, sizeof(caps));
	if (ioctl(st->fd, PTP_CLOCK_GETCAPS, &caps) < 0) {
		if (errno == ENOTTY || errno == EINVAL)
			log_warnx("source phc %s: not a PTP clock", path);
		else
			log_warn("source phc %s: PTP_CLOCK_GETCAPS", path);
		return -1;
	}
	if (clock_gettime(st->clk, &ts) < 0) {
		log_warn("source phc %s: clock_gettime", path);
		return -1;
	}
	st->last = (uint64_t)ts_to_ns(&ts);
	log_info("source phc %s: max_adj %d ppb, %d pins, pps %d; cross-timestamps: %s", path,
		 caps.max_adj, caps.n_pins, caps.pps, phc_method_names[st->method]);
	return 0;
}

static int phc_init(struct clocksource *cs, const struct source_params *p)
{
	const char *path = p->phc_device;
	struct phc_state *st = calloc(1, sizeof(*st));

	if (!st) {
		log_warn("source phc");
		return -1;
	}
	st->fd = phc_open(path);
	if (st->fd < 0)
		goto err_free;
	st->clk = FD_TO_CLOCKID(st->fd);
	st->method = phc_probe(st->fd);
	if (phc_validate(st, path) < 0)
		goto err_close;
	cs->freq_hz = NSEC_PER_SEC;
	cs->mask = UINT64_MAX;
	cs->vclock_mode = CLOCKD_VCLOCK_PHC;
	snprintf(cs->vclock_path, sizeof(cs->vclock_path), "%s", path);
	snprintf(cs->device, sizeof(cs->device), "%.*s", (int)sizeof(cs->device) - 1, path);
	cs->priv = st;
	return 0;

err_close:
	close(st->fd);
err_free:
	free(st);
	return -1;
}

static uint64_t phc_read(struct clocksource *cs)
{
	struct phc_state *st = cs->priv;
	struct timespec ts;

	if (clock_gettime(st->clk, &ts) == 0) {
		st->last = (uint64_t)ts_to_ns(&ts);
		return st->last;
	}
	if (errno == ENODEV || errno == EINVAL || errno == EBADF)
		cs->gone = true;
	return st->last;
}

/* The clock id only: st->last is the tick thread's. */
static bool phc_read_shared(const struct clocksource *cs, uint64_t *c)
{
	const struct phc_state *st = cs->priv;
	struct timespec ts;

	if (clock_gettime(st->clk, &ts) != 0)
		return false;
	*c = (uint64_t)ts_to_ns(&ts);
	return true;
}

static void phc_fini(struct clocksource *cs)
{
	struct phc_state *st = cs->priv;

	if (!st)
		return;
	close(st->fd);
	free(st);
	cs->priv = NULL;
}

const struct clocksource_ops clocksource_phc = {
	.name = "phc",
	.descr = "a PTP hardware clock (phc_device) as a dynamic POSIX clock, opened by clients",
	.init = phc_init,
	.read = phc_read,
	.read_shared = phc_read_shared,
	.fini = phc_fini,
};
