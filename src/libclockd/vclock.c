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
 * starts (a new page generation). A new daemon on another device path gets
 * a new state; the old one is left mapped (or open): another thread may be
 * reading through it this very moment, and a daemon restart is rare.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "libclockd/internal.h"
#include "shared/tickmath.h"

#define HPET_MAP_LEN 4096
#define HPET_COUNTER 0x0f0
#define FD_TO_CLOCKID(fd) ((clockid_t)((((unsigned int)~(fd)) << 3) | 3))

struct vclock {
	uint64_t generation; /* of the page last checked against (atomic) */
	uint32_t mode;
	bool usable;
	char path[64];
	const volatile uint8_t *hpet; /* CLOCKD_VCLOCK_HPET */
	int fd;                       /* CLOCKD_VCLOCK_PHC */
	clockid_t clk;
};

static struct vclock *vclock_current;

static void vclock_open(struct vclock *v)
{
	void *map;
	int fd;

	/* O_RDONLY: the HPET driver refuses writers; a PTP clock needs
	 * no more to be read. */
	fd = open(v->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
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

bool lib_vclock_read(uint32_t mode, uint64_t *c)
{
	const struct clockd_page *pg = __atomic_load_n(&lib_page_ptr, __ATOMIC_ACQUIRE);
	struct vclock *v = __atomic_load_n(&vclock_current, __ATOMIC_ACQUIRE);
	struct timespec ts;
	uint64_t gen;

	if (!pg)
		return false;
	gen = __atomic_load_n(&pg->generation, __ATOMIC_RELAXED);
	if (!v || v->mode != mode || __atomic_load_n(&v->generation, __ATOMIC_RELAXED) != gen)
		v = vclock_slow(pg, mode, gen);
	if (!v || !v->usable)
		return false;
	if (mode == CLOCKD_VCLOCK_HPET) {
		*c = *(const volatile uint64_t *)(v->hpet + HPET_COUNTER);
		return true;
	}
	if (clock_gettime(v->clk, &ts) != 0)
		return false;
	*c = (uint64_t)ts_to_ns(&ts);
	return true;
}
