/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The client's side of the timer bases, played directly on the shared
 * memory for tests/timers/base.c (and its TSan build): the bases run on a
 * fake clock (the kernel's clocks, jiffies at 1000 Hz), driven by a ticker
 * thread, and test clients that map a tb_client's memfd and push and pop
 * records on its rings.
 */
#ifndef CLOCKD_TESTS_TIMERS_TBCLIENT_H
#define CLOCKD_TESTS_TIMERS_TBCLIENT_H

#include <stdbool.h>
#include <stdint.h>

#include "clockd/timers/timerbase.h"
#include "shared/ring.h"
#include "shared/timerrec.h"

struct tbc {
	struct tb_client *c;
	void *mem;
	size_t size;
	unsigned n;                         /* ring pairs */
	uint32_t cpu[TIMER_SHM_MAX_CPUS];   /* CPU of ring pair k */
	struct ring sub[TIMER_SHM_MAX_CPUS], deliv[TIMER_SHM_MAX_CPUS];
	int sub_efd[TIMER_SHM_MAX_CPUS], deliv_efd[TIMER_SHM_MAX_CPUS];
};

/* The clock to give the bases (tb_params.clock): no daemon is needed. */
extern const struct tb_clock tbc_clock;
/* Start the bases on every CPU we may run on (cpu_mask) and a ticker
 * thread calling timer_bases_tick at each new jiffy of the page. */
struct timer_bases *tbc_bases_start(const struct tb_params *p);
void tbc_bases_stop(struct timer_bases *tb);

/* A new client of @tb mapped here; false with errno on failure. */
bool tbc_open(struct tbc *t, struct timer_bases *tb);
/* tb_client_free, then drop our mapping. */
void tbc_close(struct tbc *t, struct timer_bases *tb);
/* Push one submission on ring pair @k, waiting for room. */
void tbc_push(struct tbc *t, unsigned k, const struct timerrec *rec);
/* Push a raw record (tests of invalid ones). */
void tbc_push_raw(struct tbc *t, unsigned k, const struct ring_rec *r);
/* Pop up to @max delivery records of ring pair @k, decoded; bails out on
 * a record that does not decode. */
int tbc_pop(struct tbc *t, unsigned k, struct timerrec *out, unsigned max);

/* The clock of a timer now: jiffies_64 or ns of the clockd clock. */
uint64_t tbc_now(uint8_t clock);
/* Kernel CLOCK_MONOTONIC, ns. */
uint64_t tbc_kns(void);
void tbc_sleep_us(unsigned us);

#endif
