/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The self-wake (libclockd's conn.c): a SCHED_OTHER delivery thread that
 * expects its next expiry sleeps until it on its own timeout, and the
 * daemon's timer base then spares the delivery eventfd. Seen from
 * outside: the write() calls of the base thread of the timers' CPU
 * (/proc/PID/task/TID/io, syscw) against the callbacks, for
 *   a periodic timer and a one-shot re-armed from its callback,
 *   on CLOCKD_MONOTONIC and on CLOCKD_REALTIME (absolute),
 * each fewer than one write for two callbacks (none, as a rule); and for a
 * jiffies timer re-armed from its callback, which the tick hands over
 * with no self-wake, one write a callback or nearly: the count does see
 * the eventfd writes. Then steps of the date under a periodic
 * CLOCKD_REALTIME timer (the daemon's CLOCK_REALTIME moved by
 * tests/daemon/trap-preload.so, the machine's untouched), where the
 * delivery thread expects the next expiry at the offset before the step:
 *   a second forward: the missed periods come at once (as overruns: 450
 *   expiries within 0.4 s, where 0.4 s of periods is 200);
 *   a second back: the timer pauses (2 expiries at most in 0.4 s), then
 *   comes back, woken by the daemon (a write) after the thread woke by
 *   itself to nothing.
 * Not timed: the daemon hands records over timer_lead_other_ns = 300 us
 * early, so that they are there when the thread wakes on a loaded
 * machine or a sanitizer's build.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <clockd/clockd.h>
#include "tests/libtimers/daemon.h"
#include "tests/tap.h"

#define PERIOD_NS 2000000LL
#define WARM 20
#define COUNT 300
#define WAIT_NS 30000000000LL

struct state {
	clockd_timer_t t;
	struct clockd_timer kt;
	int64_t next;  /* the re-armed one-shot's next expiry */
	uint64_t fired;
	uint64_t expiries; /* callbacks plus overruns (the step cases) */
	int stop;
	int errors;    /* re-arms that failed */
};

static struct state st;
static unsigned cpu;

static int64_t clock_ns(clockid_t c)
{
	struct timespec ts;

	if (clockd_clock_gettime(c, &ts) != 0)
		tap_bail("clockd_clock_gettime(%d): %s", (int)c, strerror(errno));
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static struct timespec ts_of(int64_t ns)
{
	return (struct timespec){ .tv_sec = ns / 1000000000LL, .tv_nsec = ns % 1000000000LL };
}

static void on_periodic(union sigval v)
{
	int o = clockd_timer_getoverrun(st.t);

	(void)v;
	__atomic_fetch_add(&st.expiries, 1 + (uint64_t)(o > 0 ? o : 0), __ATOMIC_RELEASE);
	__atomic_fetch_add(&st.fired, 1, __ATOMIC_RELEASE);
}

static void on_oneshot(union sigval v)
{
	struct itimerspec its = { { 0, 0 }, { 0, 0 } };

	(void)v;
	__atomic_fetch_add(&st.fired, 1, __ATOMIC_RELEASE);
	if (__atomic_load_n(&st.stop, __ATOMIC_ACQUIRE))
		return;
	st.next += PERIOD_NS;
	its.it_value = ts_of(st.next);
	if (clockd_timer_settime(st.t, TIMER_ABSTIME, &its, NULL) != 0)
		__atomic_fetch_add(&st.errors, 1, __ATOMIC_RELAXED);
}

static void on_jiffies(struct clockd_timer *t, void *arg)
{
	(void)arg;
	__atomic_fetch_add(&st.fired, 1, __ATOMIC_RELEASE);
	if (!__atomic_load_n(&st.stop, __ATOMIC_ACQUIRE) && clockd_mod_timer(t, clockd_get_jiffies_64() + 2) < 0)
		__atomic_fetch_add(&st.errors, 1, __ATOMIC_RELAXED);
}

/* A number from a line "KEY: N" of /proc file @path, -1 if none. */
static long long proc_field(const char *path, const char *key)
{
	char line[128];
	long long v = -1;
	size_t n = strlen(key);
	FILE *f = fopen(path, "r");

	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, key, n) == 0 && line[n] == ':') {
			v = strtoll(line + n + 1, NULL, 10);
			break;
		}
	if (f)
		fclose(f);
	return v;
}

/* The write() calls so far of the daemon's base thread of @cpu, -1 if
 * it or its count is not there. */
static long long base_writes(void)
{
	char dir[64], path[384], want[32], comm[32];
	long long w = -1;
	struct dirent *e;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/task", td_pid());
	snprintf(want, sizeof(want), "clockd-tb/%u\n", cpu);
	d = opendir(dir);
	while (d && w < 0 && (e = readdir(d))) {
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s/comm", dir, e->d_name);
		f = fopen(path, "r");
		if (f && fgets(comm, sizeof(comm), f) && strcmp(comm, want) == 0) {
			snprintf(path, sizeof(path), "%s/%s/io", dir, e->d_name);
			w = proc_field(path, "syscw");
		}
		if (f)
			fclose(f);
	}
	if (d)
		closedir(d);
	return w;
}

enum kind { PERIODIC, REARMED, JIFFIES };

static const char *kind_name(enum kind k, clockid_t c)
{
	if (k == JIFFIES)
		return "a jiffies timer re-armed from its callback (no self-wake)";
	if (k == PERIODIC)
		return c == CLOCKD_MONOTONIC ? "a periodic CLOCKD_MONOTONIC timer" : "a periodic CLOCKD_REALTIME timer";
	return c == CLOCKD_MONOTONIC ? "a CLOCKD_MONOTONIC one-shot re-armed from its callback" :
				       "a CLOCKD_REALTIME one-shot re-armed from its callback";
}

/* Arm one timer of @k on @c; the base's writes and the callbacks between
 * the WARM-th callback and the COUNT-th, in *@writes and *@fired. */
static bool run(enum kind k, clockid_t c, long long *writes, uint64_t *fired)
{
	struct clockd_sigevent sev = { .notify = CLOCKD_SIGEV_THREAD_CPU, .cpu = (int)cpu };
	struct itimerspec its = { { 0, 0 }, { 0, 0 } };
	long long w0, w1;
	uint64_t f0, f1;
	int r;

	memset(&st, 0, sizeof(st));
	if (k == JIFFIES) {
		clockd_timer_setup(&st.kt, on_jiffies, NULL);
		r = clockd_add_timer_on(&st.kt, clockd_get_jiffies_64() + 2, cpu);
	} else {
		sev.fn = k == PERIODIC ? on_periodic : on_oneshot;
		if (clockd_timer_create(c, &sev, &st.t) != 0)
			tap_bail("clockd_timer_create: %s", strerror(errno));
		st.next = clock_ns(c) + 10 * PERIOD_NS;
		its.it_value = ts_of(st.next);
		if (k == PERIODIC)
			its.it_interval = ts_of(PERIOD_NS);
		r = clockd_timer_settime(st.t, TIMER_ABSTIME, &its, NULL);
	}
	if (r < 0)
		tap_bail("arming %s: %s", kind_name(k, c), strerror(errno));
	if (!td_wait_u64(&st.fired, WARM, WAIT_NS))
		return false;
	w0 = base_writes();
	f0 = __atomic_load_n(&st.fired, __ATOMIC_ACQUIRE);
	if (!td_wait_u64(&st.fired, COUNT, WAIT_NS))
		return false;
	w1 = base_writes();
	f1 = __atomic_load_n(&st.fired, __ATOMIC_ACQUIRE);
	/* No re-arm after this (a callback running now finishes first). */
	__atomic_store_n(&st.stop, 1, __ATOMIC_RELEASE);
	td_sleep(20000000);
	if (k == JIFFIES)
		clockd_del_timer_sync(&st.kt);
	else
		clockd_timer_delete(st.t);
	*writes = w0 < 0 || w1 < 0 ? -1 : w1 - w0;
	*fired = f1 - f0;
	return __atomic_load_n(&st.errors, __ATOMIC_RELAXED) == 0;
}

static char offset_path[300];

/* Step the daemon's CLOCK_REALTIME to @ns off the machine's. */
static void set_offset(long long ns)
{
	char tmp[320];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.new", offset_path);
	f = fopen(tmp, "w");
	if (!f || fprintf(f, "%lld\n", ns) < 0 || fclose(f) != 0 || rename(tmp, offset_path) != 0)
		tap_bail("%s: %s", offset_path, strerror(errno));
}

static uint64_t expiries(void)
{
	return __atomic_load_n(&st.expiries, __ATOMIC_ACQUIRE);
}

/* Steps under a periodic CLOCKD_REALTIME timer (see the top). */
static void steps(void)
{
	struct clockd_sigevent sev = { .notify = CLOCKD_SIGEV_THREAD_CPU, .cpu = (int)cpu, .fn = on_periodic };
	struct itimerspec its = { { 0, 0 }, { 0, 0 } };
	uint64_t e0, e1, e2;
	long long w0, w1;
	bool ok;

	memset(&st, 0, sizeof(st));
	if (clockd_timer_create(CLOCKD_REALTIME, &sev, &st.t) != 0)
		tap_bail("clockd_timer_create: %s", strerror(errno));
	its.it_value = ts_of(clock_ns(CLOCKD_REALTIME) + 10 * PERIOD_NS);
	its.it_interval = ts_of(PERIOD_NS);
	if (clockd_timer_settime(st.t, TIMER_ABSTIME, &its, NULL) != 0)
		tap_bail("clockd_timer_settime: %s", strerror(errno));
	if (!td_wait_u64(&st.fired, WARM, WAIT_NS))
		tap_bail("no callbacks of a periodic CLOCKD_REALTIME timer");
	e0 = expiries();
	set_offset(1000000000LL);
	ok = td_wait_u64(&st.expiries, e0 + 450, 400000000LL);
	tap_ok(ok, "the date a second forward: %" PRIu64 " expiries within 0.4 s (want 450 or more: the missed "
	       "periods at once)", expiries() - e0);
	td_sleep(100000000LL);
	w0 = base_writes();
	set_offset(0);
	td_sleep(100000000LL);
	e1 = expiries();
	td_sleep(400000000LL);
	e2 = expiries();
	ok = td_wait_u64(&st.expiries, e2 + 50, 5000000000LL);
	w1 = base_writes();
	tap_ok(e2 - e1 <= 2 && ok && w0 >= 0 && w1 > w0,
	       "the date a second back: %" PRIu64 " expiries in 0.4 s (want 2 at most), then %s, the base thread "
	       "writing %lld times (want 1 or more: the thread expected it a second sooner)", e2 - e1,
	       ok ? "back" : "NOT back within 5 s", w0 < 0 || w1 < 0 ? -1 : w1 - w0);
	clockd_timer_delete(st.t);
}

int main(void)
{
	static const char *const opts[] = { "timer_lead_other_ns=300000", NULL };
	static const struct {
		enum kind k;
		clockid_t c;
	} cases[] = {
		{ PERIODIC, CLOCKD_MONOTONIC }, { REARMED, CLOCKD_MONOTONIC }, { PERIODIC, CLOCKD_REALTIME },
		{ REARMED, CLOCKD_REALTIME },   { JIFFIES, CLOCKD_MONOTONIC },
	};
	char path[64], preload[400], asan_opts[512];
	const char *top, *asan;
	uint64_t cpus;
	int policy = sched_getscheduler(0);

	if (policy != SCHED_OTHER && policy != SCHED_BATCH) {
		printf("1..0 # SKIP the test runs under a policy other than SCHED_OTHER (%d): its delivery threads "
		       "would be real-time or idle-class, which do not wake by themselves\n", policy);
		return 0; /* the plan says skip (the TAP driver) */
	}
	snprintf(path, sizeof(path), "/proc/%d/io", (int)getpid());
	if (proc_field(path, "syscw") < 0) {
		printf("1..0 # SKIP no /proc/PID/io here (CONFIG_TASK_IO_ACCOUNTING): the daemon's writes cannot be "
		       "counted\n");
		return 0; /* the plan says skip (the TAP driver) */
	}
	td_init();
	cpus = td_cpus();
	if (cpus == 0)
		tap_bail("no CPU to run on");
	cpu = (unsigned)__builtin_ctzll(cpus);
	/* The daemon's CLOCK_REALTIME can be stepped (steps()). */
	top = getenv("top_builddir");
	snprintf(preload, sizeof(preload), "%s/tests/daemon/.libs/trap-preload.so", top ? top : ".");
	if (access(preload, R_OK) != 0)
		tap_bail("%s: %s (run under make check)", preload, strerror(errno));
	snprintf(offset_path, sizeof(offset_path), "%s/offset", td_dir());
	set_offset(0);
	asan = getenv("ASAN_OPTIONS");
	snprintf(asan_opts, sizeof(asan_opts), "%s%sverify_asan_link_order=0", asan ? asan : "", asan ? ":" : "");
	setenv("ASAN_OPTIONS", asan_opts, 1);
	setenv("CLOCKD_TEST_REALTIME_OFFSET", offset_path, 1);
	setenv("LD_PRELOAD", preload, 1);
	td_start(opts);
	unsetenv("LD_PRELOAD");
	tap_plan((int)(sizeof(cases) / sizeof(cases[0])) + 2);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		long long w = -1;
		uint64_t f = 0;
		bool ran = run(cases[i].k, cases[i].c, &w, &f);
		bool ok = ran && w >= 0 && f > 0 && (cases[i].k == JIFFIES ? (uint64_t)w * 2 > f : (uint64_t)w * 2 < f);

		tap_ok(ok, "%s on CPU %u: the base thread wrote %lld times for %" PRIu64 " callbacks (%s)",
		       kind_name(cases[i].k, cases[i].c), cpu, w, f,
		       !ran ? "callbacks or re-arms missing" :
		       cases[i].k == JIFFIES ? "want over one in two: the count sees the wake-ups" :
					       "want under one in two: the thread wakes itself");
	}
	steps();
	return tap_done();
}
