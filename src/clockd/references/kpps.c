/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A kernel PPS source as the reference (reference = pps, pps_device =
 * /dev/ppsN): pps-gpio, pps-ldisc on a serial line's DCD, pps-ktimer, a
 * NIC's PPS. The RFC 2783 interface through the kernel's ioctls
 * (<linux/pps.h>, what pps-tools' timepps.h wraps): PPS_GETCAP for what
 * the source captures, PPS_SETPARAMS to capture the configured edge
 * (pps_edge: rising is assert, falling is clear), then PPS_FETCH with a
 * timeout, which returns the kernel's CLOCK_REALTIME time stamp of the
 * last edge and its sequence number. A fetch that times out, or returns
 * the sequence it returned before, is a missing pulse: after 3 s the
 * reference is stalled (the discipline holds over).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include <linux/pps.h>

#include <clockd/page.h>
#include "clockd/references/reference.h"
#include "shared/log.h"
#include "shared/tickmath.h"

#define KPPS_FETCH_TIMEOUT_S 2
#define KPPS_STALL_NS (3 * (int64_t)NSEC_PER_SEC)

struct kpps_state {
	int fd;
	bool clear; /* capture the clear edge (pps_edge falling) */
	uint32_t last_seq;
	bool have_seq;
};

/* Ask the source to capture our edge; without the right to (PPS_SETPARAMS
 * needs CAP_SYS_TIME), accept a source already set up so. */
static int kpps_setup(struct kpps_state *st, const char *dev)
{
	int want = st->clear ? PPS_CAPTURECLEAR : PPS_CAPTUREASSERT, caps = 0;
	struct pps_kparams kp;

	if (ioctl(st->fd, PPS_GETCAP, &caps) < 0) {
		log_warn("reference pps %s: not a PPS device (PPS_GETCAP)", dev);
		return -1;
	}
	if (!(caps & want) || !(caps & PPS_CANWAIT)) {
		log_warnx("reference pps %s: cannot capture the %s edge with a wait (capabilities 0x%x)", dev,
			  st->clear ? "clear (falling)" : "assert (rising)", caps);
		return -1;
	}
	if (ioctl(st->fd, PPS_GETPARAMS, &kp) < 0) {
		log_warn("reference pps %s: PPS_GETPARAMS", dev);
		return -1;
	}
	if (kp.mode & want)
		return 0;
	kp.mode |= want | PPS_TSFMT_TSPEC;
	if (ioctl(st->fd, PPS_SETPARAMS, &kp) < 0) {
		log_warn("reference pps %s: cannot enable the %s edge (PPS_SETPARAMS)", dev,
			 st->clear ? "clear" : "assert");
		return -1;
	}
	return 0;
}

static int kpps_open(struct reference *r, const struct ref_params *p)
{
	struct kpps_state *st = calloc(1, sizeof(*st));

	if (!st) {
		log_warn("reference pps");
		return -1;
	}
	st->clear = p->pps.edge && strcmp(p->pps.edge, "falling") == 0;
	/* Read-write: PPS_SETPARAMS wants a writable descriptor. */
	st->fd = open(p->pps_device, O_RDWR | O_CLOEXEC);
	if (st->fd < 0 && (errno == EACCES || errno == EPERM))
		st->fd = open(p->pps_device, O_RDONLY | O_CLOEXEC);
	if (st->fd < 0) {
		log_warn("reference pps: cannot open %s", p->pps_device);
		free(st);
		return -1;
	}
	if (kpps_setup(st, p->pps_device) < 0) {
		close(st->fd);
		free(st);
		return -1;
	}
	snprintf(r->device, sizeof(r->device), "%s %s", p->pps_device, st->clear ? "clear" : "assert");
	r->priv = st;
	return 0;
}

/* One fetch: 1 with a new edge's CLOCK_REALTIME time in *@real_ns, 0 for
 * none (timeout, or the same edge again), -1 on an error (errno). */
static int kpps_fetch(struct kpps_state *st, int64_t *real_ns)
{
	struct pps_fdata fd = { .timeout = { .sec = KPPS_FETCH_TIMEOUT_S, .nsec = 0, .flags = 0 } };
	const struct pps_ktime *t;
	uint32_t seq;

	if (ioctl(st->fd, PPS_FETCH, &fd) < 0)
		return errno == ETIMEDOUT ? 0 : -1;
	t = st->clear ? &fd.info.clear_tu : &fd.info.assert_tu;
	seq = st->clear ? fd.info.clear_sequence : fd.info.assert_sequence;
	if ((st->have_seq && seq == st->last_seq) || (t->sec == 0 && t->nsec == 0))
		return 0;
	st->last_seq = seq;
	st->have_seq = true;
	*real_ns = t->sec * (int64_t)NSEC_PER_SEC + t->nsec;
	return 1;
}

static void kpps_loop(struct reference *r)
{
	struct kpps_state *st = r->priv;
	int64_t last = kclock_ns(CLOCK_MONOTONIC);

	while (!refqueue_stopping(r)) {
		int64_t real_ns, now = kclock_ns(CLOCK_MONOTONIC);
		struct ref_event ev = { 0 };
		int n = kpps_fetch(st, &real_ns);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			refqueue_set_fault(r, errno == ENODEV ? CLOCKD_FAULT_GONE : CLOCKD_FAULT_ERROR);
			/* Do not spin on a device that keeps failing. */
			struct timespec pause = { 0, 100 * 1000000 };

			clock_nanosleep(CLOCK_MONOTONIC, 0, &pause, NULL);
			continue;
		}
		if (n == 0) {
			if (now - last > KPPS_STALL_NS)
				refqueue_set_fault(r, CLOCKD_FAULT_STALLED);
			continue;
		}
		/* The kernel stamped the edge in CLOCK_REALTIME: take it to
		 * CLOCK_MONOTONIC by the offset between them now (they move
		 * together but for a step, which the discipline sees). */
		ev.stamp_ns = real_ns - (kclock_ns(CLOCK_REALTIME) - kclock_ns(CLOCK_MONOTONIC));
		ev.ref_real_ns = 0; /* a PPS edge: a whole second */
		last = now;
		refqueue_set_fault(r, CLOCKD_FAULT_NONE);
		refqueue_push(r, &ev);
	}
}

static void kpps_close(struct reference *r)
{
	struct kpps_state *st = r->priv;

	close(st->fd);
	free(st);
	r->priv = NULL;
}

const struct ref_driver ref_kpps = {
	.name = "pps", .pps = true, .open = kpps_open, .loop = kpps_loop, .close = kpps_close,
};
