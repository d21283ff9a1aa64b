/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The ordering promise of <clockd/clockd.h>: a value read by one thread,
 * then by another thread after the two synchronised, is never earlier than
 * the first. Two threads, one per CPU, against a live daemon ($CLOCKD_SHM):
 * each acquires the latest value the other published, reads the clock,
 * checks it is not earlier, and publishes its own (release). Also each
 * thread's own reads never go back.
 */

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <clockd/clockd.h>
#include "tests/tap.h"
#include "tests/util.h"

#define READS_PER_THREAD 2000000

struct shared {
	clockid_t id;
	int64_t latest; /* the largest value any thread published */
};

struct counts {
	int cpu;
	struct shared *sh;
	uint64_t reads, failed, before_other, before_own;
};

static int64_t read_ns(clockid_t id, bool *ok)
{
	struct timespec ts;

	*ok = clockd_clock_gettime(id, &ts) == 0;
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void *reader(void *arg)
{
	struct counts *c = arg;
	int64_t own = INT64_MIN;

	tu_pin(c->cpu);
	for (int i = 0; i < READS_PER_THREAD; i++) {
		int64_t seen = __atomic_load_n(&c->sh->latest, __ATOMIC_ACQUIRE);
		bool ok;
		int64_t t = read_ns(c->sh->id, &ok);

		c->reads++;
		if (!ok) {
			c->failed++;
			continue;
		}
		c->before_other += t < seen;
		c->before_own += t < own;
		own = t;
		while (seen < t && !__atomic_compare_exchange_n(&c->sh->latest, &seen, t, false,
								 __ATOMIC_RELEASE, __ATOMIC_ACQUIRE))
			;
	}
	return NULL;
}

static void run(clockid_t id, const char *name, int ncpu)
{
	struct shared sh = { .id = id, .latest = INT64_MIN };
	struct counts c[2] = { { .cpu = 0, .sh = &sh }, { .cpu = ncpu > 1 ? 1 : 0, .sh = &sh } };
	pthread_t th[2];

	for (int i = 0; i < 2; i++)
		if (pthread_create(&th[i], NULL, reader, &c[i]) != 0)
			tap_bail("pthread_create: %s", strerror(errno));
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	tap_ok(c[0].failed + c[1].failed == 0, "%s: %llu reads on CPUs %d and %d, none failed", name,
	       (unsigned long long)(c[0].reads + c[1].reads), c[0].cpu, c[1].cpu);
	tap_ok(c[0].before_other + c[1].before_other == 0,
	       "%s: no read earlier than one another thread made before it (%llu)", name,
	       (unsigned long long)(c[0].before_other + c[1].before_other));
	tap_ok(c[0].before_own + c[1].before_own == 0, "%s: no thread saw its own time go back (%llu)",
	       name, (unsigned long long)(c[0].before_own + c[1].before_own));
}

int main(void)
{
	struct clockd_status st;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	tap_plan(9);
	if (clockd_status(&st, sizeof(st)) != 0 || st.state != CLOCKD_STATE_LIVE)
		tap_bail("no live daemon on $CLOCKD_SHM");
	tap_diag("vclock mode %u (1: TSC), %ld CPUs", st.vclock_mode, ncpu);
	run(CLOCKD_MONOTONIC, "CLOCKD_MONOTONIC", (int)ncpu);
	run(CLOCKD_MONOTONIC_RAW, "CLOCKD_MONOTONIC_RAW", (int)ncpu);
	run(CLOCKD_MONOTONIC_COARSE, "CLOCKD_MONOTONIC_COARSE", (int)ncpu);
	return tap_done();
}
