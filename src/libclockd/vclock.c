/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Client reads of the device counters: the HPET main counter through a
 * read-only mapping of the device's register page (CLOCKD_VCLOCK_HPET), a
 * PTP clock through clock_gettime on the opened device (CLOCKD_VCLOCK_PHC).
 *
 * The device is mapped or opened once, on the first fine read that needs
 * it, and the result (usable or not) is published with a compare-and-swap,
 * so threads racing on the first read agree on one state and the loser
 * undoes its own work. A client that may not map or open the device gets
 * tick resolution (false), and does not try again until a new daemon
 * starts (a new page generation). A page whose device is not what its
 * mode says (not a character device under /dev, not the HPET, a PTP clock
 * that does not answer PTP_CLOCK_GETCAPS) was not written by a daemon:
 * reads fail with EPROTO, never a signal or a hang (a FIFO, an empty file,
 * /dev/zero). A new daemon on another device path gets
 * a new state; the old one is left mapped (or open): another thread may be
 * reading through it this very moment, and a daemon restart is rare.
 */
#include <fcntl.h>
#include <linux/ptp_clock.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "libclockd/internal.h"
#include "shared/tickmath.h"

#define HPET_MAP_LEN 4096
#define HPET_COUNTER 0x0f0
/* The HPET character device: a misc device (major 10), HPET_MINOR in the
 * kernel's miscdevice.h. Its mmap gives one page of registers. */
#define HPET_MISC_MAJOR 10
#define HPET_MISC_MINOR 228
#define FD_TO_CLOCKID(fd) ((clockid_t)((((unsigned int)~(fd)) << 3) | 3))

struct vclock {
	uint64_t generation; /* of the page last checked against (atomic) */
	uint32_t mode;
	bool usable;
	bool forged; /* the device is not what the mode says: EPROTO */
	char path[64];
	const volatile uint8_t *hpet; /* CLOCKD_VCLOCK_HPET */
	int fd;                       /* CLOCKD_VCLOCK_PHC */
	clockid_t clk;
};

static struct vclock *vclock_current;

/* @path names something under /dev, with no ".." to climb out of it. */
static bool vclock_path_ok(const char *path)
{
	return strncmp(path, "/dev/", 5) == 0 && path[5] && !strstr(path, "/../") &&
	       strcmp(path + strlen(path) - 3, "/..") != 0;
}

/* The opened @fd is the device @v->mode says: a character device, the HPET
 * (whose one register page is what is mapped) or a PTP clock. */
static bool vclock_fd_ok(const struct vclock *v, int fd)
{
	struct ptp_clock_caps caps;
	struct stat st;

	if (fstat(fd, &st) < 0 || !S_ISCHR(st.st_mode))
		return false;
	if (v->mode == CLOCKD_VCLOCK_PHC)
		return ioctl(fd, PTP_CLOCK_GETCAPS, &caps) == 0;
	/* The counter lies within the one page the driver maps. */
	_Static_assert(HPET_COUNTER + sizeof(uint64_t) <= HPET_MAP_LEN, "HPET counter offset");
	return major(st.st_rdev) == HPET_MISC_MAJOR && minor(st.st_rdev) == HPET_MISC_MINOR &&
	       sysconf(_SC_PAGESIZE) >= HPET_MAP_LEN;
}

static void vclock_open(struct vclock *v)
{
	void *map;
	int fd;

	if (!vclock_path_ok(v->path)) {
		v->forged = true;
		return;
	}
	/* O_RDONLY: the HPET driver refuses writers; a PTP clock needs no
	 * more to be read. O_NONBLOCK: a FIFO does not hang the open. A
	 * device this client may not open gives tick resolution. */
	fd = open(v->path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return;
	if (!vclock_fd_ok(v, fd)) {
		close(fd);
		v->forged = true;
		return;
	}
	if (v->mode == CLOCKD_VCLOCK_PHC) {
		v->fd = fd;
		v->clk = FD_TO_CLOCKID(fd);
		v->usable = true;
		return;
	}
	/* The mapping outlives the descriptor, and closing it frees the HPET
	 * timer every open reserves. */
	map = mmap(NULL, HPET_MAP_LEN, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return;
	v->hpet = map;
	v->usable = true;
}

static void vclock_close(struct vclock *v)
{
	if (v->hpet)
		munmap((void *)(uintptr_t)v->hpet, HPET_MAP_LEN);
	if (v->fd >= 0)
		close(v->fd);
	free(v);
}

/* The state for page @pg and @mode, made when missing or stale. NULL only
 * when out of memory. */
static __attribute__((noinline)) struct vclock *vclock_slow(const struct clockd_page *pg,
							     uint32_t mode, uint64_t gen)
{
	struct vclock *old = __atomic_load_n(&vclock_current, __ATOMIC_ACQUIRE), *v;

	if (old && old->mode == mode &&
	    strncmp(old->path, pg->vclock_path, sizeof(old->path)) == 0) {
		__atomic_store_n(&old->generation, gen, __ATOMIC_RELAXED);
		return old;
	}
	v = calloc(1, sizeof(*v));
	if (!v)
		return NULL;
	v->generation = gen;
	v->mode = mode;
	v->fd = -1;
	memcpy(v->path, pg->vclock_path, sizeof(v->path));
	v->path[sizeof(v->path) - 1] = '\0';
	vclock_open(v);
	if (__atomic_compare_exchange_n(&vclock_current, &old, v, false, __ATOMIC_ACQ_REL,
					__ATOMIC_ACQUIRE))
		return v;
	/* Another thread published first: use its state (old now holds it)
	 * if it is for this device. */
	vclock_close(v);
	if (old && old->mode == mode && strncmp(old->path, pg->vclock_path, sizeof(old->path)) == 0)
		return old;
	return NULL;
}

int lib_vclock_read(uint32_t mode, uint64_t *c)
{
	const struct clockd_page *pg = __atomic_load_n(&lib_page_ptr, __ATOMIC_ACQUIRE);
	struct vclock *v = __atomic_load_n(&vclock_current, __ATOMIC_ACQUIRE);
	struct timespec ts;
	uint64_t gen;

	if (!pg)
		return 0;
	gen = __atomic_load_n(&pg->generation, __ATOMIC_RELAXED);
	if (!v || v->mode != mode || __atomic_load_n(&v->generation, __ATOMIC_RELAXED) != gen)
		v = vclock_slow(pg, mode, gen);
	if (v && v->forged)
		return -1;
	if (!v || !v->usable)
		return 0;
	if (mode == CLOCKD_VCLOCK_HPET) {
		*c = *(const volatile uint64_t *)(v->hpet + HPET_COUNTER);
		return 1;
	}
	if (clock_gettime(v->clk, &ts) != 0)
		return 0;
	*c = (uint64_t)ts_to_ns(&ts);
	return 1;
}
