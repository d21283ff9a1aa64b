/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The x86 time stamp counter. */
#ifndef CLOCKD_SHARED_TSC_H
#define CLOCKD_SHARED_TSC_H

#include <stdbool.h>
#include <stdint.h>

#if defined(__x86_64__) || defined(__i386__)
#define CLOCKD_HAVE_TSC 1
#include <cpuid.h>

/* rdtsc ordered after every earlier load (lfence is dispatch-serialising on
 * Intel, and on AMD where the kernel set MSR_DE_CFG[1], as Linux does), as
 * the kernel's rdtsc_ordered(). */
static inline uint64_t rdtsc_ordered(void)
{
	uint32_t lo, hi;

	__asm__ __volatile__("lfence\n\trdtsc" : "=a"(lo), "=d"(hi)::"memory");
	return ((uint64_t)hi << 32) | lo;
}

/* CPUID 0x80000007 EDX bit 8: the TSC runs at a constant rate in every
 * power state (Linux shows it as constant_tsc + nonstop_tsc). */
static inline bool tsc_is_invariant(void)
{
	unsigned a, b, c, d;

	if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u)
		return false;
	__get_cpuid(0x80000007u, &a, &b, &c, &d);
	return (d >> 8) & 1;
}
#else
#define CLOCKD_HAVE_TSC 0
static inline uint64_t rdtsc_ordered(void) { return 0; }
static inline bool tsc_is_invariant(void) { return false; }
#endif

#endif
