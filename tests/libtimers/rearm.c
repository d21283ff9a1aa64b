/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Missed wake-ups end to end (issue #18; tests/timers/rearm runs 1e6
 * through the timer bases alone): REARM_E2E_N iterations (default 100000)
 * of arm, cancel and re-arm races at one deadline through libclockd's
 * POSIX timers and a clockd on its default configuration (SCHED_FIFO timer
 * threads as root). Not timed.
 *
 * Batches of timers spread over the CPUs share one CLOCKD_MONOTONIC
 * deadline D (a little past, now, or up to 200 us ahead); per timer one of:
 *   0  arm an hour ahead, re-arm at D: fires exactly once;
 *   1  arm at D, disarm, re-arm at D: once, or twice if the first arm
 *      fired before the disarm;
 *   2  arm at D, re-arm at D: likewise;
 *   3  arm at D, disarm: at most once;
 *   4  arm at D; once it fired, arm at D again (now past): exactly once
 *      more, at once.
 * Every callback runs at or after D on the clockd clock (none early, the
 * library waits out the daemon's lead), the timer's last arm always fires,
 * and once a batch is over (a quiet 20 ms) nothing more comes.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <clockd/clockd.h>
#include "tests/libtimers/daemon.h"
#include "tests/tap.h"

#define BATCH 200u
#define HOUR_NS 3600000000000LL
#define WAIT_NS 30000000000LL
#define MS 1000000LL

struct tmr {
	clockd_timer_t t;
	uint64_t fired;       /* callbacks so far */
	uint64_t early;       /* callbacks before the deadline */
	int64_t deadline;     /* D, read by the callback */
	uint64_t lo, hi;      /* allowed callbacks at the end of the batch */
	uint64_t want;        /* the last arm fired once fired reaches this */
	unsigned pattern;
};

static struct tmr tm[BATCH];

static int64_t clockd_ns(void)
{
	struct timespec ts;

	clockd_clock_gettime(CLOCKD_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void fire(union sigval v)
{
	struct tmr *m = v.sival_ptr;

	if (clockd_ns() < __atomic_load_n(&m->deadline, __ATOMIC_ACQUIRE))
		__atomic_fetch_add(&m->early, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&m->fired, 1, __ATOMIC_RELEASE);
}

static int settime_abs(struct tmr *m, int64_t at)
{
	struct itimerspec its = { .it_value = { at / 1000000000LL, at % 1000000000LL } };

	return clockd_timer_settime(m->t, TIMER_ABSTIME, &its, NULL);
}

static int disarm(struct tmr *m)
{
	struct itimerspec its = { { 0, 0 }, { 0, 0 } };

	return clockd_timer_settime(m->t, 0, &its, NULL);
}

/* Start timer @m's pattern at deadline @d; its bounds. -1 on an API error. */
static int start(struct tmr *m, int64_t d)
{
	uint64_t f0 = __atomic_load_n(&m->fired, __ATOMIC_ACQUIRE);
	int r = 0;

	__atomic_store_n(&m->deadline, d, __ATOMIC_RELEASE);
	switch (m->pattern) {
	case 0:
		r = settime_abs(m, d + HOUR_NS) | settime_abs(m, d);
		m->lo = m->hi = f0 + 1;
		break;
	case 1:
		r = settime_abs(m, d) | disarm(m) | settime_abs(m, d);
		m->lo = f0 + 1;
		m->hi = f0 + 2;
		break;
	case 2:
		r = settime_abs(m, d) | settime_abs(m, d);
		m->lo = f0 + 1;
		m->hi = f0 + 2;
		break;
	case 3:
		r = settime_abs(m, d) | disarm(m);
		m->lo = f0;
		m->hi = f0 + 1;
		break;
	default:
		r = settime_abs(m, d);
		m->lo = m->hi = f0 + 2; /* and the re-arm once it fired */
		break;
	}
	m->want = m->lo;
	return r;
}

static bool batch_done(unsigned n, int64_t end, uint64_t *again)
{
	for (;;) {
		bool done = true;

		for (unsigned i = 0; i < n; i++) {
			struct tmr *m = &tm[i];
			uint64_t f = __atomic_load_n(&m->fired, __ATOMIC_ACQUIRE);

			if (m->pattern == 4 && f == m->lo - 1 && m->want == m->lo) {
				/* Fired: the same deadline again, now past. */
				if (settime_abs(m, m->deadline) < 0)
					return false;
				m->want = m->lo + 1; /* marker: re-armed */
				(*again)++;
			}
			done = done && f >= m->lo && (m->pattern != 4 || m->want == m->lo + 1);
		}
		if (done)
			return true;
		if (td_now() > end)
			return false;
		td_sleep(20000);
	}
}

int main(void)
{
	const char *s = getenv("REARM_E2E_N");
	uint64_t n = s && *s ? strtoull(s, NULL, 10) : 100000, done = 0, again = 0, early = 0, missed = 0;
	uint64_t extra = 0, api_err = 0;
	static const int64_t offs[] = { -20000, 0, 5000, 20000, 50000, 200000 };
	uint64_t cpus;
	unsigned ncpu = 0, cpu_of[64] = { 0 };
	int64_t t0;

	tap_plan(4);
	td_init();
	td_start(NULL);
	cpus = td_cpus();
	for (unsigned c = 0; c < 64; c++)
		if (cpus >> c & 1)
			cpu_of[ncpu++] = c;
	if (ncpu == 0)
		tap_bail("the daemon serves no CPU");
	for (unsigned i = 0; i < BATCH; i++) {
		struct clockd_sigevent sev = { .notify = CLOCKD_SIGEV_THREAD_CPU, .cpu = (int)cpu_of[i % ncpu],
					       .fn = fire, .value.sival_ptr = &tm[i] };

		if (clockd_timer_create(CLOCKD_MONOTONIC, &sev, &tm[i].t) < 0)
			tap_bail("clockd_timer_create: %s", strerror(errno));
	}
	t0 = td_now();
	for (unsigned b = 0; done < n; b++) {
		unsigned k = n - done < BATCH ? (unsigned)(n - done) : BATCH;
		int64_t d = clockd_ns() + offs[b % (sizeof(offs) / sizeof(offs[0]))];

		for (unsigned i = 0; i < k; i++) {
			tm[i].pattern = (i + b) % 5;
			if (start(&tm[i], d) < 0)
				api_err++;
		}
		if (!batch_done(k, td_now() + WAIT_NS, &again)) {
			for (unsigned i = 0; i < k; i++)
				missed += __atomic_load_n(&tm[i].fired, __ATOMIC_ACQUIRE) < tm[i].lo;
			tap_diag("batch %u: a last arm did not fire in 30 s", b);
			break;
		}
		/* A quiet stretch, then nothing beyond the bounds. */
		td_sleep(2 * MS);
		for (unsigned i = 0; i < k; i++)
			extra += __atomic_load_n(&tm[i].fired, __ATOMIC_ACQUIRE) > tm[i].hi;
		done += k;
	}
	td_sleep(20 * MS);
	for (unsigned i = 0; i < BATCH; i++) {
		early += __atomic_load_n(&tm[i].early, __ATOMIC_ACQUIRE);
		extra += __atomic_load_n(&tm[i].fired, __ATOMIC_ACQUIRE) > tm[i].hi;
	}
	tap_diag("%" PRIu64 " iterations (%" PRIu64 " re-armed after their fire) in %.1f s", done, again,
		 (double)(td_now() - t0) / 1e9);
	tap_ok(api_err == 0, "every arm and disarm accepted (%" PRIu64 " errors)", api_err);
	tap_ok(done == n && missed == 0, "the last arm of every one of %" PRIu64 " iterations fired (%" PRIu64
	       " done, %" PRIu64 " missed)", n, done, missed);
	tap_ok(extra == 0, "no timer fired more than its arms allow (%" PRIu64 ")", extra);
	tap_ok(early == 0, "no callback before its deadline on the clockd clock (%" PRIu64 ")", early);
	for (unsigned i = 0; i < BATCH; i++)
		clockd_timer_delete(tm[i].t);
	return tap_done();
}
