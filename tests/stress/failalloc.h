/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The control file of tests/stress/failalloc.so (an LD_PRELOAD allocation
 * failure injector): a file of this struct, named by $FAILALLOC_CTL, that
 * the preloaded process maps shared at start and the test writes.
 */
#ifndef CLOCKD_TESTS_STRESS_FAILALLOC_H
#define CLOCKD_TESTS_STRESS_FAILALLOC_H

#include <stdint.h>

#define FAILALLOC_MAGIC 0x4c494146u /* "FAIL" */

struct failalloc_ctl {
	uint32_t magic;   /* FAILALLOC_MAGIC: anything else, the file is ignored */
	uint32_t mode;    /* 0 off, 1 fail every allocation, N > 1 every Nth */
	uint64_t calls;   /* allocations seen while mode != 0 (the Nth counts from here) */
	uint64_t failed;  /* allocations failed (ENOMEM), ever */
};

#endif
