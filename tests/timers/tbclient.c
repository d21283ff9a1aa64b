/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Test client of the timer bases (see tbclient.h). */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/tap.h"
#include "timers/tbclient.h"

static pthread_t ticker;
static int ticker_stop;

void tbc_sleep_us(unsigned us)
{
	struct timespec ts = { us / 1000000, (long)(us % 1000000) * 1000 };

	nanosleep(&ts, NULL);
}

uint64_t tbc_kns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The fake clock the bases run on: the kernel's clocks, and jiffies at
 * 1000 Hz from a start that wraps the 32-bit view soon, as a page's. */
#define TBC_JIFFIES0 ((uint64_t)(uint32_t)-300000)

static uint64_t kclock(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int fake_now_ns(void *ctx, bool realtime, uint64_t *ns)
{
	(void)ctx;
	*ns = kclock(realtime ? CLOCK_REALTIME : CLOCK_MONOTONIC);
	return 0;
}

static uint64_t fake_jiffies(void *ctx)
{
	(void)ctx;
	return TBC_JIFFIES0 + kclock(CLOCK_MONOTONIC) / 1000000u;
}

const struct tb_clock tbc_clock = { .now_ns = fake_now_ns, .jiffies = fake_jiffies };

uint64_t tbc_now(uint8_t clock)
{
	if (clock == CTL_CLOCK_JIFFIES)
		return fake_jiffies(NULL);
	return kclock(clock == CTL_CLOCK_MONOTONIC ? CLOCK_MONOTONIC : CLOCK_REALTIME);
}

/* The daemon's tick thread, as far as the bases care: each new jiffy. */
static void *ticker_main(void *arg)
{
	struct timer_bases *tb = arg;
	uint64_t last = 0, j;

	while (!__atomic_load_n(&ticker_stop, __ATOMIC_RELAXED)) {
		j = fake_jiffies(NULL);
		if (j != last) {
			timer_bases_tick(tb, j);
			last = j;
		}
		tbc_sleep_us(100);
	}
	return NULL;
}

struct timer_bases *tbc_bases_start(const struct tb_params *p)
{
	struct timer_bases *tb;

	if (timer_bases_start(&tb, p) < 0)
		tap_bail("timer_bases_start failed");
	__atomic_store_n(&ticker_stop, 0, __ATOMIC_RELAXED);
	if (pthread_create(&ticker, NULL, ticker_main, tb) != 0)
		tap_bail("pthread_create");
	return tb;
}

void tbc_bases_stop(struct timer_bases *tb)
{
	__atomic_store_n(&ticker_stop, 1, __ATOMIC_RELAXED);
	pthread_join(ticker, NULL);
	timer_bases_stop(tb);
}

bool tbc_open(struct tbc *t, struct timer_bases *tb)
{
	int fds[1 + 2 * TIMER_SHM_MAX_CPUS];
	const struct timer_shm *shm;
	unsigned nfds;
	struct stat st;
	size_t region;

	memset(t, 0, sizeof(*t));
	t->c = tb_client_new(tb, getpid(), getuid(), fds, 1 + 2 * TIMER_SHM_MAX_CPUS, &nfds);
	if (!t->c)
		return false;
	if (fstat(fds[0], &st) < 0)
		tap_bail("fstat memfd: %s", strerror(errno));
	t->size = (size_t)st.st_size;
	t->mem = mmap(NULL, t->size, PROT_READ | PROT_WRITE, MAP_SHARED, fds[0], 0);
	if (t->mem == MAP_FAILED)
		tap_bail("mmap memfd: %s", strerror(errno));
	close(fds[0]);
	shm = t->mem;
	if (shm->magic != TIMER_SHM_MAGIC || shm->ncpus != timer_bases_ncpus(tb) || nfds != 1 + 2 * shm->ncpus)
		tap_bail("timer_shm header: magic %llx ncpus %u, %u fds", (unsigned long long)shm->magic,
			 shm->ncpus, nfds);
	t->n = shm->ncpus;
	region = shm->region;
	for (unsigned k = 0; k < t->n; k++) {
		char *at = (char *)t->mem + TIMER_SHM_HDR + 2 * k * region;

		t->cpu[k] = shm->cpu[k];
		if (ring_attach(&t->sub[k], at, region) < 0 || ring_attach(&t->deliv[k], at + region, region) < 0)
			tap_bail("ring_attach of ring pair %u", k);
		t->sub_efd[k] = fds[1 + 2 * k];
		t->deliv_efd[k] = fds[2 + 2 * k];
	}
	return true;
}

void tbc_close(struct tbc *t, struct timer_bases *tb)
{
	tb_client_free(tb, t->c);
	munmap(t->mem, t->size);
	memset(t, 0, sizeof(*t));
}

void tbc_push(struct tbc *t, unsigned k, const struct timerrec *rec)
{
	struct ring_rec r;

	timerrec_encode(rec, &r);
	tbc_push_raw(t, k, &r);
}

void tbc_push_raw(struct tbc *t, unsigned k, const struct ring_rec *r)
{
	uint64_t one = 1;
	int n;

	for (;;) {
		n = ring_push(&t->sub[k], r);
		if (n < 0)
			tap_bail("ring_push: %d", n);
		if (ring_needs_wake(&t->sub[k]) && write(t->sub_efd[k], &one, sizeof(one)) < 0)
			tap_bail("write submission eventfd: %s", strerror(errno));
		if (n == 1)
			return;
		sched_yield();
	}
}

int tbc_pop(struct tbc *t, unsigned k, struct timerrec *out, unsigned max)
{
	struct ring_rec r[256];
	int n;

	if (max > 256)
		max = 256;
	n = ring_pop_batch(&t->deliv[k], r, max);
	if (n < 0)
		tap_bail("ring_pop_batch: %d", n);
	for (int i = 0; i < n; i++)
		if (timerrec_decode_deliv(&r[i], &out[i]) < 0)
			tap_bail("delivery record %d does not decode: %016llx", i, (unsigned long long)r[i].word[0]);
	return n;
}
