/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Small helpers the C tests and benchmarks share, one copy each: time in
 * ns, a reproducible random generator and the CPUs this process may use.
 * Header-only (static inline), so a test or a guest program that links
 * nothing of tests/ can use it.
 */
#ifndef CLOCKD_TESTS_UTIL_H
#define CLOCKD_TESTS_UTIL_H

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

/* A timespec in ns. */
static inline int64_t tu_ts_ns(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec;
}

/* The kernel's clock @id now, in ns (through libc: under the preload
 * library, the process's clock). */
static inline int64_t tu_clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return tu_ts_ns(&ts);
}

static inline int64_t tu_mono_ns(void)
{
	return tu_clock_ns(CLOCK_MONOTONIC);
}

/* xorshift64*: reproducible and independent of libc. *@state must not be
 * 0 (its one stuck state). */
static inline uint64_t tu_rng(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * 0x2545f4914f6cdd1du;
}

/* Pin the calling thread to @cpu: true, or false with errno set. */
static inline bool tu_pin(int cpu)
{
	cpu_set_t set;
	int r;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	r = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	if (r != 0)
		errno = r;
	return r == 0;
}

/* The CPUs this process may run on, lowest first: up to @max of them into
 * @cpus; returns how many (0 if they cannot be read). */
static inline int tu_cpus(int *cpus, int max)
{
	cpu_set_t set;
	int n = 0;

	if (sched_getaffinity(0, sizeof(set), &set) < 0)
		return 0;
	for (int c = 0; c < CPU_SETSIZE && n < max; c++)
		if (CPU_ISSET(c, &set))
			cpus[n++] = c;
	return n;
}

#endif
