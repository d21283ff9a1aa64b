/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Crash and restart under load (issue #8, part 1). Eight threads read every
 * clockd clock without pause; two of them also arm and cancel jiffies
 * timers. Meanwhile the daemon is killed with SIGKILL at a random moment
 * (at HZ=1000 some kills land inside a page update) and started again on
 * the same page, N times ($STRESS_RESTARTS, default 20; 100 with
 * STRESS_LONG=1). It checks:
 *  - no clock read ever goes backwards in a thread: CLOCKD_MONOTONIC,
 *    _MONOTONIC_RAW, _MONOTONIC_COARSE and jiffies_64 across every restart,
 *    CLOCKD_REALTIME within a daemon's life (a new daemon takes the
 *    kernel's realtime);
 *  - no read is torn: a coarse value is never ahead of a fine one read
 *    after it, tv_nsec is in range, and CLOCKD_REALTIME - CLOCKD_MONOTONIC
 *    (bracketed by the monotonic reads around each realtime read) stays
 *    one constant through a daemon's life (2 ns of rounding allowed);
 *  - after every kill, every reader gets ESTALE. A reader does not wait
 *    for the page to grow older than its stale limit (100 ms): the kernel
 *    marks the page's robust futex word OWNER_DIED as the daemon exits,
 *    and every read checks it. The page's age when each reader first saw
 *    ESTALE and the delay from kill() (which includes the kernel's tearing
 *    the process down, on 2 CPUs shared with 8 busy readers) are shown in
 *    tick periods: figures, not pass/fail limits;
 *  - with the page dead, a process that asked for the fallback reads the
 *    kernel's clocks (a child: clockd_set_fallback() is per process);
 *  - the timer threads' timers live through every kill: a new daemon
 *    comes back within the reconnect timeout (set to 30 s here, so that
 *    a slow start on a loaded machine is still "back"), so no call fails
 *    (no ECONNRESET: nothing is lost), timers armed before a kill run on
 *    the next daemon, and no callback runs before its expiry.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <clockd/clockd.h>
#include "tests/libtimers/daemon.h"
#include "tests/tap.h"
#include "tests/util.h"

#define READERS 8
#define TIMER_READERS 2
#define TIMERS 4
#define HZ 1000
#define TICK_NS (1000000000LL / HZ)
#define MAX_RESTARTS 1000
#define WAIT_NS 20000000000LL /* generous: a loaded 2-CPU machine */

static const char *const daemon_opts[] = { "hz=1000", NULL };

/* Written by the main thread before each kill. */
static int64_t kill_at[MAX_RESTARTS + 1];
static int64_t reaped_at[MAX_RESTARTS + 1];
static uint32_t kill_epoch;
static int daemon_up; /* between td_start() and the next kill */
static volatile int stop;

struct reader {
	pthread_t th;
	int idx;
	uint32_t epoch_seen;   /* last kill whose ESTALE this reader saw */
	uint64_t stale_seen;   /* kills seen (atomic) */
	uint64_t reads;
	uint64_t backward, torn, bad_errno, stale_alive;
	int64_t *delay;        /* per kill: ns from kill() to the first ESTALE */
	int64_t *age;          /* per kill: the page's age at that ESTALE */
	/* timers */
	struct clockd_timer t[TIMERS];
	uint64_t resets, reconnects, arms, cancels, tm_errors;
	int last_errno;        /* for the report of an unexpected error */
	int after_reset;       /* an ECONNRESET not yet followed by a success */
};

static struct reader rd[READERS];
static uint64_t fired, early, unchecked;

static void on_timer(struct clockd_timer *t, void *arg)
{
	uint64_t j;

	(void)arg;
	errno = 0;
	j = clockd_get_jiffies_64();
	if (j == 0 && errno)
		__atomic_fetch_add(&unchecked, 1, __ATOMIC_RELAXED);
	else if (j < t->expires)
		__atomic_fetch_add(&early, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&fired, 1, __ATOMIC_RELAXED);
}

/* A read failed with @err: ESTALE after a kill is expected (and timed). */
static void read_failed(struct reader *r, int err)
{
	uint32_t e = __atomic_load_n(&kill_epoch, __ATOMIC_ACQUIRE);

	if (err != ESTALE) {
		r->bad_errno++;
		r->last_errno = err;
		return;
	}
	if (e == r->epoch_seen) {
		/* a live daemon late by its stale limit */
		r->stale_alive += __atomic_load_n(&daemon_up, __ATOMIC_RELAXED);
		return;
	}
	r->delay[e] = td_now() - kill_at[e];
	{
		struct clockd_status st;

		r->age[e] = clockd_status(&st, sizeof(st)) == 0 ? st.age_ns : -1;
	}
	r->epoch_seen = e;
	__atomic_fetch_add(&r->stale_seen, 1, __ATOMIC_RELEASE);
}

/* One arm or cancel, with the errors a daemon going away may cause. */
static void timer_step(struct reader *r, unsigned k)
{
	struct clockd_timer *t = &r->t[k % TIMERS];
	int rc;

	if (clockd_timer_pending(t) && k % 3 == 0) {
		rc = clockd_del_timer(t);
		r->cancels += rc >= 0;
	} else if (!clockd_timer_pending(t)) {
		errno = 0;
		uint64_t j = clockd_get_jiffies_64();

		if (j == 0 && errno)
			return; /* no live page: the read path reports it */
		/* Not pending, but its callback may still be running and
		 * about to read t->expires: wait for it (as a kernel caller
		 * must before re-arming a timer whose callback checks
		 * timer->expires), so the check sees the expiry it ran for. */
		clockd_del_timer_sync(t);
		rc = clockd_add_timer(t, j + 1 + k % 5);
		r->arms += rc == 0;
	} else {
		return;
	}
	if (rc >= 0) {
		if (r->after_reset) {
			r->reconnects++;
			r->after_reset = 0;
		}
		return;
	}
	if (errno == ECONNRESET) {
		r->resets++;
		r->after_reset = 1;
	} else if (errno != ECONNREFUSED && errno != ENOENT) {
		r->tm_errors++;
		r->last_errno = errno;
	}
}

/* Real minus monotonic lies in [lo, hi] for the whole of a daemon's life. */
struct offset {
	int64_t lo, hi;
	int valid;
};

static void check_offset(struct reader *r, struct offset *o, int64_t m_before, int64_t real, int64_t m_after)
{
	int64_t lo = real - m_after, hi = real - m_before;

	if (!o->valid) {
		*o = (struct offset){ lo, hi, 1 };
		return;
	}
	if (lo > o->lo)
		o->lo = lo;
	if (hi < o->hi)
		o->hi = hi;
	if (o->lo > o->hi + 2)
		r->torn++;
}

static void *reader_main(void *arg)
{
	static const clockid_t order[] = {
		CLOCKD_MONOTONIC, CLOCKD_MONOTONIC_COARSE, CLOCKD_MONOTONIC, CLOCKD_REALTIME,
		CLOCKD_MONOTONIC, CLOCKD_MONOTONIC_RAW, CLOCKD_REALTIME_COARSE,
	};
	enum { N = sizeof(order) / sizeof(order[0]) };
	struct reader *r = arg;
	int64_t last_mono = 0, last_raw = 0, last_cm = 0, last_real = 0;
	uint64_t last_j = 0;
	struct offset off = { 0 };
	unsigned k = 0;

	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		int64_t v[N];
		struct timespec ts;
		uint64_t j;
		int i;

		int err = 0;

		for (i = 0; i < N; i++) {
			if (clockd_clock_gettime(order[i], &ts) != 0) {
				err = errno;
				break;
			}
			if (ts.tv_nsec < 0 || ts.tv_nsec >= 1000000000)
				r->torn++;
			v[i] = tu_ts_ns(&ts);
		}
		errno = 0;
		j = i < N ? 0 : clockd_get_jiffies_64();
		if (i == N && j == 0 && errno)
			err = errno;
		if (err) {
			read_failed(r, err);
			off.valid = 0;
			last_real = 0;
			continue;
		}
		r->reads++;
		/* v: mono0, coarse, mono1, real, mono2, raw, real_coarse */
		if (v[0] < last_mono || v[2] < v[0] || v[4] < v[2] || v[1] < last_cm ||
		    v[5] < last_raw || v[3] < last_real || j < last_j)
			r->backward++;
		if (v[1] > v[2])
			r->torn++;
		check_offset(r, &off, v[2], v[3], v[4]);
		last_mono = v[4];
		last_cm = v[1];
		last_raw = v[5];
		last_real = v[3];
		last_j = j;
		if (r->idx < TIMER_READERS && ++k % 64 == 0)
			timer_step(r, k / 64);
	}
	return NULL;
}

/* In a child (clockd_set_fallback is per process): with the daemon dead,
 * the fallback gives each clock's kernel equivalent, between two kernel
 * reads. */
static int fallback_child(void)
{
	static const clockid_t ids[][2] = {
		{ CLOCKD_MONOTONIC, CLOCK_MONOTONIC }, { CLOCKD_REALTIME, CLOCK_REALTIME },
		{ CLOCKD_MONOTONIC_RAW, CLOCK_MONOTONIC_RAW },
		{ CLOCKD_MONOTONIC_COARSE, CLOCK_MONOTONIC_COARSE },
		{ CLOCKD_REALTIME_COARSE, CLOCK_REALTIME_COARSE },
	};
	struct timespec a, v, b;

	if (clockd_clock_gettime(CLOCKD_MONOTONIC, &v) == 0 || errno != ESTALE)
		return 2; /* without the fallback: ESTALE */
	clockd_set_fallback(1);
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		clock_gettime(ids[i][1], &a);
		if (clockd_clock_gettime(ids[i][0], &v) != 0)
			return 3;
		clock_gettime(ids[i][1], &b);
		if (tu_ts_ns(&v) < tu_ts_ns(&a) || tu_ts_ns(&v) > tu_ts_ns(&b))
			return 4;
	}
	return 0;
}

static bool fallback_ok(void)
{
	pid_t pid;
	int st;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		execl("/proc/self/exe", "crashload", "--fallback-child", (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return false;
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		tap_diag("fallback child: status %#x", st);
		return false;
	}
	return true;
}

static bool all_saw_stale(uint64_t kills)
{
	int64_t end = td_now() + WAIT_NS;

	for (;;) {
		int n = 0;

		for (int i = 0; i < READERS; i++)
			n += __atomic_load_n(&rd[i].stale_seen, __ATOMIC_ACQUIRE) >= kills;
		if (n == READERS)
			return true;
		if (td_now() > end)
			return false;
		td_sleep(1000000);
	}
}

static int cmp64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

static void show_dist(const char *what, int64_t *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp64);
	tap_diag("%s, %zu samples: min %.2f, p50 %.2f, p90 %.2f, p99 %.2f, max %.2f tick periods "
		 "(%lld ns)", what, n, (double)v[0] / TICK_NS, (double)v[n / 2] / TICK_NS,
		 (double)v[n * 9 / 10] / TICK_NS, (double)v[n * 99 / 100] / TICK_NS,
		 (double)v[n - 1] / TICK_NS, (long long)TICK_NS);
}

/* The stale-detection delays: figures (8 readers share 2 CPUs here, so
 * much of it is waiting for a CPU), with the time kill() took to reap the
 * daemon. */
static void show_delays(int kills)
{
	size_t n = 0, na = 0;
	int64_t *all = calloc((size_t)kills * READERS, sizeof(*all));
	int64_t *ages = calloc((size_t)kills * READERS, sizeof(*ages));
	int64_t *reap = calloc((size_t)kills, sizeof(*reap));

	if (all && ages && reap && kills > 0) {
		for (int i = 0; i < READERS; i++) {
			for (int e = 1; e <= kills; e++) {
				if (rd[i].epoch_seen < (uint32_t)e && rd[i].delay[e] == 0)
					continue; /* never saw this kill (counted elsewhere) */
				all[n++] = rd[i].delay[e];
				if (rd[i].age[e] >= 0)
					ages[na++] = rd[i].age[e];
			}
		}
		for (int e = 1; e <= kills; e++)
			reap[e - 1] = reaped_at[e] - kill_at[e];
		if (na)
			show_dist("the page's age (since its last update) at each reader's first ESTALE "
				  "(its stale limit is 100 ms)", ages, na);
		if (n)
			show_dist("kill() to each reader's first ESTALE", all, n);
		show_dist("kill() to the daemon reaped (waitpid)", reap, (size_t)kills);
	}
	free(all);
	free(ages);
	free(reap);
}

int main(int argc, char **argv)
{
	const char *env = getenv("STRESS_RESTARTS");
	int restarts = env ? atoi(env) : getenv("STRESS_LONG") ? 100 : 20;
	uint64_t reads = 0, backward = 0, torn = 0, bad = 0, alive = 0, resets = 0;
	uint64_t arms = 0, cancels = 0, tmerr = 0;
	int fallback_bad = 0, stale_missed = 0, done = 0;

	if (argc > 1 && strcmp(argv[1], "--fallback-child") == 0)
		return fallback_child();
	if (restarts < 1 || restarts > MAX_RESTARTS)
		restarts = 20;
	tap_plan(7);
	srand((unsigned)getpid());
	td_init();
	clockd_set_reconnect_timeout(30000);
	td_start(daemon_opts);
	daemon_up = 1;
	for (int i = 0; i < READERS; i++) {
		rd[i].idx = i;
		rd[i].delay = calloc((size_t)restarts + 1, sizeof(int64_t));
		rd[i].age = calloc((size_t)restarts + 1, sizeof(int64_t));
		for (int k = 0; k < TIMERS; k++)
			clockd_timer_setup(&rd[i].t[k], on_timer, NULL);
		if (!rd[i].delay || !rd[i].age || pthread_create(&rd[i].th, NULL, reader_main, &rd[i]) != 0)
			tap_bail("cannot start reader %d", i);
	}
	for (int n = 1; n <= restarts; n++) {
		/* A random moment: 20 to 300 ms of load after the start. */
		td_sleep(20000000 + (int64_t)(rand() % 280) * 1000000);
		__atomic_store_n(&daemon_up, 0, __ATOMIC_RELAXED);
		kill_at[n] = td_now();
		__atomic_store_n(&kill_epoch, (uint32_t)n, __ATOMIC_RELEASE);
		td_stop(SIGKILL);
		reaped_at[n] = td_now();
		if (!all_saw_stale((uint64_t)n))
			stale_missed++;
		if (!fallback_ok())
			fallback_bad++;
		td_start(daemon_opts);
		__atomic_store_n(&daemon_up, 1, __ATOMIC_RELAXED);
		done = n;
	}
	/* A last round of load on the last daemon. */
	td_sleep(300000000);
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < READERS; i++) {
		pthread_join(rd[i].th, NULL);
		reads += rd[i].reads;
		backward += rd[i].backward;
		torn += rd[i].torn;
		bad += rd[i].bad_errno;
		alive += rd[i].stale_alive;
		resets += rd[i].resets;
		arms += rd[i].arms;
		cancels += rd[i].cancels;
		tmerr += rd[i].tm_errors;
		if (rd[i].bad_errno || rd[i].tm_errors)
			tap_diag("reader %d: last unexpected errno %d (%s)", i, rd[i].last_errno,
				 strerror(rd[i].last_errno));
	}
	for (int i = 0; i < TIMER_READERS; i++)
		for (int k = 0; k < TIMERS; k++)
			clockd_del_timer_sync(&rd[i].t[k]);
	tap_diag("%d restarts, %llu consistent samples of 5 clocks and jiffies", done, (unsigned long long)reads);
	tap_ok(done == restarts && reads > 0, "the daemon was killed and restarted %d times under load", done);
	tap_ok(backward == 0, "no clock went backwards (%llu)", (unsigned long long)backward);
	tap_ok(torn == 0, "no torn read (%llu)", (unsigned long long)torn);
	tap_ok(stale_missed == 0 && bad == 0,
	       "every reader got ESTALE after every kill (%d kills missed), no other errno (%llu); "
	       "ESTALE from a live daemon: %llu", stale_missed, (unsigned long long)bad,
	       (unsigned long long)alive);
	show_delays(done);
	tap_ok(fallback_bad == 0, "with the page dead, the fallback gave kernel time (%d failures)", fallback_bad);
	tap_diag("timers: %llu arms, %llu cancels, %llu fired, %llu checked against a dead page skipped",
		 (unsigned long long)arms, (unsigned long long)cancels, (unsigned long long)fired,
		 (unsigned long long)unchecked);
	tap_ok(resets == 0 && tmerr == 0 && arms > 0,
	       "timer clients: no call failed across the restarts (%llu ECONNRESET, %llu other errors)",
	       (unsigned long long)resets, (unsigned long long)tmerr);
	tap_ok(early == 0 && fired > 0, "no timer callback early (%llu of %llu)", (unsigned long long)early,
	       (unsigned long long)fired);
	return tap_done();
}
