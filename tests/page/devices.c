/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * clockd_devices2() and clockd_devices() on a private page whose device
 * table this test writes (three entries): the size argument as
 * clockd_status() takes one. Entries of this version's size, of the first
 * version's, and of a larger (future) struct land at that stride, with the
 * fields this library does not know zeroed; @max limits what is written,
 * never the count; a size below the first version, a negative @max and a
 * NULL array get EINVAL/EFAULT; the old call matches the new one.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <clockd/clockd.h>
#include <clockd/page.h>
#include "tests/tap.h"
#include "testpage.h"

#define NDEV 3

static void put_device(struct clockd_page *pg, unsigned int i)
{
	struct clockd_page_device *e = &pg->devices[i];

	memset(e, 0, sizeof(*e));
	snprintf(e->name, sizeof(e->name), "dev%u", i);
	snprintf(e->device, sizeof(e->device), "/dev/thing%u", i);
	e->role = i == 0 ? CLOCKD_DEV_SOURCE : CLOCKD_DEV_TICK;
	e->state = i == 1 ? CLOCKD_DEV_ACTIVE : CLOCKD_DEV_STANDBY;
	e->fault = i;
	e->since_ns = 1000 + i;
	e->faults = 10 + i;
	e->spurious = 20 + i;
	e->missed = 30 + i;
}

/* Entry @i as the library should report it. */
static bool entry_ok(const struct clockd_device *d, unsigned int i)
{
	char name[16], device[48];

	snprintf(name, sizeof(name), "dev%u", i);
	snprintf(device, sizeof(device), "/dev/thing%u", i);
	if (strcmp(d->name, name) != 0 || strcmp(d->device, device) != 0 ||
	    d->role != (i == 0 ? CLOCKD_DEV_SOURCE : CLOCKD_DEV_TICK) ||
	    d->state != (i == 1 ? CLOCKD_DEV_ACTIVE : CLOCKD_DEV_STANDBY) || d->fault != i ||
	    d->since_ns != 1000 + (int64_t)i || d->faults != 10 + i || d->spurious != 20 + i ||
	    d->missed != 30 + i) {
		tap_diag("entry %u: %s %s role %u state %u fault %u since %lld counts %llu %llu %llu", i,
			 d->name, d->device, d->role, d->state, d->fault, (long long)d->since_ns,
			 (unsigned long long)d->faults, (unsigned long long)d->spurious,
			 (unsigned long long)d->missed);
		return false;
	}
	return true;
}

static bool all_bytes(const unsigned char *p, size_t n, unsigned char v)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != v)
			return false;
	return true;
}

/* A caller built against a future, larger struct (a field of its own at
 * the end): entries at its stride, the unknown tail zeroed. */
struct future_device {
	struct clockd_device now;
	uint64_t later[3];
};

int main(void)
{
	static struct test_page tp;
	struct clockd_device dev[NDEV + 1], old[NDEV + 1];
	struct future_device fut[NDEV];
	unsigned char v1[NDEV + 1][CLOCKD_DEVICE_SIZE_V1];
	struct clockd_device one;
	bool good;
	int n;

	tap_plan(12);
	if (tp_create(&tp) < 0)
		tap_bail("cannot create a test page");
	for (unsigned int i = 0; i < NDEV; i++)
		put_device(tp.pf.pg, i);
	tp.pf.pg->ndevices = NDEV;
	setenv("CLOCKD_SHM", tp.path, 1);

	tap_ok(CLOCKD_DEVICE_SIZE_V1 == 112 && sizeof(struct clockd_device) >= CLOCKD_DEVICE_SIZE_V1,
	       "CLOCKD_DEVICE_SIZE_V1 is 112, the struct at least that (%zu)",
	       sizeof(struct clockd_device));

	memset(dev, 0xa5, sizeof(dev));
	n = clockd_devices2(dev, sizeof(dev[0]), NDEV + 1);
	good = n == NDEV;
	for (unsigned int i = 0; good && i < NDEV; i++)
		good = entry_ok(&dev[i], i);
	tap_ok(good && all_bytes((unsigned char *)&dev[NDEV], sizeof(dev[NDEV]), 0xa5),
	       "clockd_devices2(sizeof): %d devices, every field, the spare entry untouched", n);

	memset(dev, 0xa5, sizeof(dev));
	n = clockd_devices2(dev, sizeof(dev[0]), 1);
	tap_ok(n == NDEV && entry_ok(&dev[0], 0) &&
	       all_bytes((unsigned char *)&dev[1], sizeof(dev[1]), 0xa5),
	       "max 1: the count is still %d, one entry written", n);

	n = clockd_devices2(NULL, sizeof(dev[0]), 0);
	tap_ok(n == NDEV, "NULL array with max 0: the count (%d)", n);

	/* First-version entries, packed at 112 bytes. */
	memset(v1, 0xa5, sizeof(v1));
	n = clockd_devices2((struct clockd_device *)(void *)v1, CLOCKD_DEVICE_SIZE_V1, NDEV);
	good = n == NDEV;
	for (unsigned int i = 0; good && i < NDEV; i++) {
		memcpy(&one, v1[i], CLOCKD_DEVICE_SIZE_V1);
		good = entry_ok(&one, i);
	}
	tap_ok(good && all_bytes(v1[NDEV], sizeof(v1[NDEV]), 0xa5),
	       "entries of CLOCKD_DEVICE_SIZE_V1 bytes: packed at that stride, nothing beyond");

	memset(fut, 0xa5, sizeof(fut));
	n = clockd_devices2(&fut[0].now, sizeof(fut[0]), NDEV);
	good = n == NDEV;
	for (unsigned int i = 0; good && i < NDEV; i++)
		good = entry_ok(&fut[i].now, i) &&
		       all_bytes((unsigned char *)fut[i].later, sizeof(fut[i].later), 0);
	tap_ok(good, "entries of a larger (future) struct: at its stride, the unknown tail zeroed");

	errno = 0;
	n = clockd_devices2(dev, CLOCKD_DEVICE_SIZE_V1 - 1, NDEV);
	tap_ok(n == -1 && errno == EINVAL, "a size below CLOCKD_DEVICE_SIZE_V1: EINVAL (%d, %s)", n,
	       strerror(errno));
	errno = 0;
	n = clockd_devices2(dev, 0, NDEV);
	tap_ok(n == -1 && errno == EINVAL, "size 0: EINVAL (%d, %s)", n, strerror(errno));
	errno = 0;
	n = clockd_devices2(dev, sizeof(dev[0]), -1);
	tap_ok(n == -1 && errno == EINVAL, "a negative max: EINVAL (%d, %s)", n, strerror(errno));
	errno = 0;
	n = clockd_devices2(NULL, sizeof(dev[0]), 1);
	tap_ok(n == -1 && errno == EFAULT, "NULL array with max 1: EFAULT (%d, %s)", n,
	       strerror(errno));

	/* The 0.2 call: the same entries; a negative max still counts. */
	memset(old, 0xa5, sizeof(old));
	memset(dev, 0xa5, sizeof(dev));
	n = clockd_devices(old, NDEV + 1);
	tap_ok(n == NDEV && clockd_devices2(dev, sizeof(dev[0]), NDEV + 1) == NDEV &&
	       memcmp(old, dev, sizeof(old)) == 0,
	       "clockd_devices() gives what clockd_devices2() gives (%d)", n);
	n = clockd_devices(old, -1);
	tap_ok(n == NDEV, "clockd_devices() with a negative max: the count, as in 0.2 (%d)", n);

	tp_destroy(&tp);
	return tap_done();
}
