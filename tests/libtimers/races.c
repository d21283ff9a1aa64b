/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Timers changed while their callback runs, and slow clients:
 *  - clockd_del_timer_sync() from another thread waits for a running
 *    callback (which sleeps) and returns only after it finished;
 *  - clockd_mod_timer() from another thread while the callback runs
 *    re-arms it (it runs again, for the new expiry);
 *  - a callback re-arms itself, then a later run deletes itself;
 *  - clockd_del_timer_sync() and clockd_timer_delete() from the timer's
 *    own callback fail with EDEADLK;
 *  - a 1 ms periodic POSIX timer whose callback sleeps 20 ms counts
 *    overruns: timer_getoverrun() >= 15, and the expiries notified plus
 *    their overruns track elapsed / period;
 *  - clockd_timer_delete() while the callback arms the timer again.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <string.h>

#include <clockd/clockd.h>
#include "tests/libtimers/daemon.h"
#include "tests/tap.h"

#define WAIT_NS 10000000000LL
#define MS 1000000LL

static uint64_t started, finished;

static void slow(struct clockd_timer *t, void *arg)
{
	(void)t;
	(void)arg;
	__atomic_fetch_add(&started, 1, __ATOMIC_RELEASE);
	td_sleep(200 * MS);
	__atomic_fetch_add(&finished, 1, __ATOMIC_RELEASE);
}

static void test_del_sync(void)
{
	struct clockd_timer t;
	uint64_t done;
	int r;

	started = finished = 0;
	clockd_timer_setup(&t, slow, NULL);
	tap_ok(clockd_add_timer(&t, clockd_get_jiffies_64() + 1) == 0, "armed a slow timer");
	tap_ok(td_wait_u64(&started, 1, WAIT_NS), "its callback started");
	r = clockd_del_timer_sync(&t);
	done = __atomic_load_n(&finished, __ATOMIC_ACQUIRE);
	tap_ok(r == 0 && done == 1, "del_timer_sync returned %d after the callback finished (%llu)", r,
	       (unsigned long long)done);
}

static void test_mod_running(void)
{
	struct clockd_timer t;
	int r;

	started = finished = 0;
	clockd_timer_setup(&t, slow, NULL);
	clockd_add_timer(&t, clockd_get_jiffies_64() + 1);
	td_wait_u64(&started, 1, WAIT_NS);
	r = clockd_mod_timer(&t, clockd_get_jiffies_64() + 2);
	tap_ok(r == 0 && clockd_timer_pending(&t) == 1,
	       "mod_timer while the callback runs: %d (was not pending), pending now", r);
	tap_ok(td_wait_u64(&started, 2, WAIT_NS), "it ran again for the new expiry");
	tap_ok(clockd_del_timer_sync(&t) == 0 && finished == 2, "del_timer_sync after both runs finished");
}

static uint64_t self_runs;
static int self_err[2];

static void self(struct clockd_timer *t, void *arg)
{
	uint64_t n = __atomic_load_n(&self_runs, __ATOMIC_RELAXED) + 1;

	(void)arg;
	if (n < 3) {
		clockd_mod_timer(t, clockd_get_jiffies_64() + 1);
	} else {
		errno = 0;
		self_err[0] = clockd_del_timer_sync(t) < 0 ? errno : 0;
		clockd_mod_timer(t, clockd_get_jiffies_64() + 1000);
		self_err[1] = clockd_del_timer(t);
	}
	__atomic_store_n(&self_runs, n, __ATOMIC_RELEASE);
}

static void test_self(void)
{
	struct clockd_timer t;

	clockd_timer_setup(&t, self, NULL);
	clockd_add_timer(&t, clockd_get_jiffies_64() + 1);
	tap_ok(td_wait_u64(&self_runs, 3, WAIT_NS), "a callback re-armed itself twice");
	td_sleep(50 * MS);
	tap_ok(self_runs == 3 && !clockd_timer_pending(&t) && self_err[1] == 1,
	       "then deleted itself (del_timer: %d), pending %d, runs %llu", self_err[1],
	       clockd_timer_pending(&t), (unsigned long long)self_runs);
	tap_ok(self_err[0] == EDEADLK, "del_timer_sync from its own callback: %s", strerror(self_err[0]));
}

static clockd_timer_t pself;
static int pself_err;
static uint64_t pself_done;

static void posix_self(union sigval v)
{
	(void)v;
	errno = 0;
	pself_err = clockd_timer_delete(pself) < 0 ? errno : 0;
	__atomic_store_n(&pself_done, 1, __ATOMIC_RELEASE);
}

static void test_posix_self(void)
{
	struct clockd_sigevent sev = { .notify = CLOCKD_SIGEV_THREAD_CPU, .cpu = -1, .fn = posix_self };
	struct itimerspec its = { .it_value = { 0, MS } };
	bool ran;

	clockd_timer_create(CLOCKD_MONOTONIC, &sev, &pself);
	clockd_timer_settime(pself, 0, &its, NULL);
	ran = td_wait_u64(&pself_done, 1, WAIT_NS);

	tap_ok(ran && pself_err == EDEADLK, "timer_delete from its own function: %s", strerror(pself_err));
	tap_ok(clockd_timer_delete(pself) == 0, "and from outside afterwards");
}

static uint64_t notified, expiries;
static clockd_timer_t ovt;

static void sleepy(union sigval v)
{
	(void)v;
	__atomic_fetch_add(&expiries, 1 + (uint64_t)clockd_timer_getoverrun(ovt), __ATOMIC_RELAXED);
	__atomic_fetch_add(&notified, 1, __ATOMIC_RELEASE);
	td_sleep(20 * MS);
}

static void test_overrun(void)
{
	struct clockd_sigevent sev = { .notify = CLOCKD_SIGEV_THREAD_CPU, .cpu = -1, .fn = sleepy };
	struct itimerspec its = { .it_value = { 0, MS }, .it_interval = { 0, MS } };
	int64_t t0, elapsed;
	uint64_t sum;
	int maxov = 0, ov;
	double ratio;

	clockd_timer_create(CLOCKD_MONOTONIC, &sev, &ovt);
	t0 = td_now();
	clockd_timer_settime(ovt, 0, &its, NULL);
	while (__atomic_load_n(&notified, __ATOMIC_ACQUIRE) < 20 && td_now() - t0 < WAIT_NS) {
		ov = clockd_timer_getoverrun(ovt);
		maxov = ov > maxov ? ov : maxov;
		td_sleep(MS);
	}
	elapsed = td_now() - t0;
	sum = __atomic_load_n(&expiries, __ATOMIC_RELAXED);
	clockd_timer_delete(ovt);
	tap_ok(maxov >= 15, "1 ms period, 20 ms callback: overrun reached %d", maxov);
	/* elapsed covers expiries 1..elapsed/period; the last ~20 ms may not
	 * be notified yet: a wide band, not a speed threshold. */
	ratio = (double)sum / ((double)elapsed / MS);
	tap_ok(ratio > 0.5 && ratio <= 1.05, "expiries notified with overruns %llu over %.1f ms (ratio %.2f)",
	       (unsigned long long)sum, (double)elapsed / MS, ratio);
}

/*
 * clockd_timer_delete() while the timer's callback runs and arms it
 * again: the callback sleeps 2 ms, then re-arms its timer for 1 ms; the
 * main thread deletes the timer meanwhile (it waits for the callback).
 * Once delete returns no callback may run for it: deleted while armed
 * again, its id named freed memory to the next expiry (a use after
 * free, ASan in CI: tests/libtimers/early).
 */
struct rearmer {
	clockd_timer_t id;
	int deleted;       /* set once clockd_timer_delete() returned */
	uint64_t calls, after;
};

static void rearm_self(union sigval v)
{
	struct rearmer *r = v.sival_ptr;
	struct itimerspec again = { .it_value = { .tv_nsec = MS } };

	if (__atomic_load_n(&r->deleted, __ATOMIC_ACQUIRE))
		__atomic_fetch_add(&r->after, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&r->calls, 1, __ATOMIC_RELEASE);
	td_sleep(2 * MS);
	clockd_timer_settime(r->id, 0, &again, NULL);
}

static void test_delete_rearming(void)
{
	static struct rearmer rs[50];
	struct itimerspec first = { .it_value = { .tv_nsec = MS } };
	uint64_t after = 0;
	int made = 0;

	for (int i = 0; i < 50; i++) {
		struct rearmer *r = &rs[i];
		struct clockd_sigevent sev = { .notify = CLOCKD_SIGEV_THREAD_CPU, .cpu = -1, .fn = rearm_self,
					       .value.sival_ptr = r };

		if (clockd_timer_create(CLOCKD_MONOTONIC, &sev, &r->id) < 0 ||
		    clockd_timer_settime(r->id, 0, &first, NULL) < 0)
			continue;
		made++;
		/* Into its callback's sleep, before the re-arm. */
		td_wait_u64(&r->calls, 1, WAIT_NS);
		td_sleep(MS);
		clockd_timer_delete(r->id);
		__atomic_store_n(&r->deleted, 1, __ATOMIC_RELEASE);
	}
	td_sleep(50 * MS);
	for (int i = 0; i < 50; i++)
		after += __atomic_load_n(&rs[i].after, __ATOMIC_RELAXED);
	tap_ok(made == 50 && after == 0,
	       "clockd_timer_delete() while the callback arms the timer again: no callback after it returned "
	       "(%" PRIu64 " callbacks after; %d of 50 timers made)", after, made);
}

int main(void)
{
	static const char *const opts[] = { "hz=1000", NULL };

	td_init();
	td_start(opts);
	tap_plan(14);
	test_del_sync();
	test_mod_running();
	test_self();
	test_posix_self();
	test_overrun();
	test_delete_rearming();
	return tap_done();
}
