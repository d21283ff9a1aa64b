/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Timers survive a daemon restart (issue #15, item 3).
 *
 * Part 1: 4 client processes hold RESTART_TIMERS (default 10 000) pending
 * timers in all: kernel-flavoured jiffies timers (one-shot, and periodic
 * ones that re-arm themselves from their callback) and POSIX timers on
 * CLOCKD_MONOTONIC and CLOCKD_REALTIME (one-shot, and periodic on
 * CLOCKD_MONOTONIC, running from 0.2 to 0.4 s on), one-shot expiries 1 to
 * 4 s ahead. 0.8 s after the arming began the daemon is killed with
 * SIGKILL and started again on the same page and socket 0.2 s later (some
 * one-shots expire meanwhile). Every one-shot
 * must run exactly once and never early (the clock read in the callback
 * against its expiry: jiffies against timer->expires, ns against the
 * absolute expiry); every periodic one must keep running after the restart
 * (PERIODS_AFTER more runs) and, for the POSIX ones, count the periods
 * missed while the daemon was down as overruns: the expiries counted
 * (1 + overrun each) then catch up with the clock, so some callback after
 * the restart sees its expiry less than the downtime behind.
 *
 * Part 2 (this process): cancelled, deleted and newly armed while no daemon
 * runs; the timers then follow the calls made, not the old arming.
 *
 * Part 3: with a reconnect timeout of 1 s and no daemon for longer, the
 * timers are lost: not pending, never run, and the next arming call says
 * ECONNRESET.
 *
 * Part 4 (run first): a process in clockd_fd() mode keeps its timer too.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <clockd/clockd.h>
#include "tests/libtimers/daemon.h"
#include "tests/tap.h"

#define CLIENTS 4
#define NSEC 1000000000LL
#define PERIOD_NS 50000000LL  /* POSIX periodic timers */
#define PERIODS_AFTER 5       /* runs of each periodic timer after the restart */
#define DONE_TIMEOUT_NS (30 * NSEC) /* generous: a loaded 2-CPU machine */

/* A client's mix, per 100 timers. */
#define K_ONESHOT 40
#define K_PERIODIC 5
#define P_ONESHOT 50 /* a quarter of them on CLOCKD_REALTIME */
#define P_PERIODIC 5

enum kind { KONE, KPER, PONE, PPER };

struct tstate {
	enum kind kind;
	clockid_t clock;
	int64_t expires;      /* one-shot: jiffies or clock ns; POSIX periodic: the first expiry */
	uint64_t period;      /* KPER: jiffies */
	clockd_timer_t pt;
	uint64_t runs;        /* callbacks */
	uint64_t runs_after;  /* callbacks that began after the restart */
	uint64_t expiries;    /* PPER: 1 + overrun, summed */
	int64_t min_lag;      /* PPER after the restart: callback time - the expiry it stands for */
	uint64_t early;
	uint64_t errors;
};

/* What a client reports to the parent. */
struct report {
	uint64_t armed, pending_at_kill;
	uint64_t oneshots, once, twice_or_more, never;
	uint64_t periodic, periodic_kept;
	uint64_t early, unchecked, errors, overrun_gap;
	int64_t max_min_lag;
};

static struct tstate *ts;
static struct clockd_timer *kt;
static int ntimers;
static int64_t restarted_at; /* kernel CLOCK_MONOTONIC, set once known */
static int64_t downtime;
/* $RESTART_STRETCH: every delay of parts 1 and 2 that much longer (valgrind). */
static int stretch = 1;
static uint64_t unchecked; /* callbacks that could not read the clock */

static int64_t clock_ns(clockid_t c)
{
	struct timespec now;

	if (clockd_clock_gettime(c, &now) < 0)
		return -1;
	return (int64_t)now.tv_sec * NSEC + now.tv_nsec;
}

static bool after_restart(void)
{
	int64_t r = __atomic_load_n(&restarted_at, __ATOMIC_ACQUIRE);

	return r && td_now() >= r;
}

static void on_ktimer(struct clockd_timer *t, void *arg)
{
	struct tstate *s = arg;
	uint64_t j;

	errno = 0;
	j = clockd_get_jiffies_64();
	if (j == 0 && errno)
		__atomic_fetch_add(&unchecked, 1, __ATOMIC_RELAXED); /* no live page to check against */
	else if (j < t->expires)
		s->early++;
	__atomic_fetch_add(&s->runs, 1, __ATOMIC_RELAXED);
	if (after_restart())
		__atomic_fetch_add(&s->runs_after, 1, __ATOMIC_RELAXED);
	if (s->kind == KPER && s->runs_after < PERIODS_AFTER && clockd_mod_timer(t, t->expires + s->period) < 0)
		s->errors++;
}

static void on_ptimer(union sigval v)
{
	struct tstate *s = &ts[v.sival_int];
	int64_t now = clock_ns(s->clock);
	int ov;

	__atomic_fetch_add(&s->runs, 1, __ATOMIC_RELAXED);
	if (now < 0)
		__atomic_fetch_add(&unchecked, 1, __ATOMIC_RELAXED);
	if (s->kind == PONE) {
		if (now >= 0 && now < s->expires)
			s->early++;
		return;
	}
	ov = clockd_timer_getoverrun(s->pt);
	if (ov < 0) {
		s->errors++;
		ov = 0;
	}
	s->expiries += 1 + (uint64_t)ov;
	/* The expiry this run stands for: the first plus (count - 1)
	 * periods. Ahead of the clock means early (or overruns counted
	 * twice). */
	int64_t at = s->expires + (int64_t)(s->expiries - 1) * PERIOD_NS;

	if (now >= 0 && now < at)
		s->early++;
	if (after_restart()) {
		__atomic_fetch_add(&s->runs_after, 1, __ATOMIC_RELAXED);
		if (now >= 0 && (s->min_lag < 0 || now - at < s->min_lag))
			s->min_lag = now - at;
	}
}

static int arm_one(int i, uint64_t hz)
{
	struct tstate *s = &ts[i];
	int slot = i % 100;
	int64_t delay = stretch * (NSEC + (int64_t)(rand() % 3000) * 1000000); /* 1 to 4 s */

	s->min_lag = -1;
	/* Periodic ones run from 0.2-0.4 s on: they miss periods while the
	 * daemon is down. */
	if ((slot >= K_ONESHOT && slot < K_ONESHOT + K_PERIODIC) || slot >= K_ONESHOT + K_PERIODIC + P_ONESHOT)
		delay = stretch * (200000000 + (int64_t)(rand() % 200) * 1000000);
	if (slot < K_ONESHOT + K_PERIODIC) {
		s->kind = slot < K_ONESHOT ? KONE : KPER;
		s->period = hz / 20 ? hz / 20 : 1;
		s->expires = (int64_t)(clockd_get_jiffies_64() + (uint64_t)delay * hz / NSEC);
		clockd_timer_setup(&kt[i], on_ktimer, s);
		return clockd_add_timer(&kt[i], (uint64_t)s->expires);
	}
	struct clockd_sigevent sev = { .notify = CLOCKD_SIGEV_THREAD_CPU, .cpu = -1, .fn = on_ptimer };
	struct itimerspec its = { { 0, 0 }, { 0, 0 } };

	s->kind = slot < K_ONESHOT + K_PERIODIC + P_ONESHOT ? PONE : PPER;
	s->clock = s->kind == PONE && slot % 4 == 0 ? CLOCKD_REALTIME : CLOCKD_MONOTONIC;
	sev.value.sival_int = i;
	if (clockd_timer_create(s->clock, &sev, &s->pt) < 0)
		return -1;
	s->expires = clock_ns(s->clock) + delay;
	its.it_value.tv_sec = s->expires / NSEC;
	its.it_value.tv_nsec = s->expires % NSEC;
	if (s->kind == PPER)
		its.it_interval.tv_nsec = PERIOD_NS;
	return clockd_timer_settime(s->pt, TIMER_ABSTIME, &its, NULL);
}

static bool is_pending(int i)
{
	struct itimerspec v;

	/* A self-re-arming one is not pending while its callback runs. */
	if (ts[i].kind == KPER)
		return clockd_timer_pending(&kt[i]) == 1 || __atomic_load_n(&ts[i].runs, __ATOMIC_RELAXED) > 0;
	if (ts[i].kind == KONE)
		return clockd_timer_pending(&kt[i]) == 1;
	return clockd_timer_gettime(ts[i].pt, &v) == 0 && (v.it_value.tv_sec || v.it_value.tv_nsec);
}

static bool all_done(void)
{
	for (int i = 0; i < ntimers; i++) {
		const struct tstate *s = &ts[i];
		uint64_t runs = __atomic_load_n(&s->runs, __ATOMIC_RELAXED);
		uint64_t after = __atomic_load_n(&s->runs_after, __ATOMIC_RELAXED);

		if ((s->kind == KONE || s->kind == PONE) ? runs == 0 : after < PERIODS_AFTER)
			return false;
	}
	return true;
}

static void read_all(int fd, void *buf, size_t len)
{
	char *p = buf;

	while (len) {
		ssize_t n = read(fd, p, len);

		if (n <= 0)
			_exit(3);
		p += n;
		len -= (size_t)n;
	}
}

/* A client: arm, say so on @out, learn the restart time on @in, wait for
 * every timer, report on @out. */
static void client(int n, int in, int out)
{
	struct report r = { 0 };
	uint64_t hz = clockd_hz();
	int64_t when[2], end;

	srand((unsigned)getpid());
	ts = calloc((size_t)n, sizeof(*ts));
	kt = calloc((size_t)n, sizeof(*kt));
	if (!ts || !kt || hz == 0)
		_exit(2);
	ntimers = n;
	for (int i = 0; i < n; i++) {
		if (arm_one(i, hz) == 0) {
			r.armed++;
			continue;
		}
		printf("# client %d: timer %d (kind %d) not armed: %s\n", (int)getpid(), i, (int)ts[i].kind,
		       strerror(errno));
		fflush(stdout);
	}
	/* A one-shot that already ran is accounted for too: on a slow
	 * machine (a sanitizer's build beside other tests) the arming can
	 * take past the first one-shots' expiry, 1 s after their arm; that
	 * it runs once is checked below like the others. */
	for (int i = 0; i < n; i++) {
		bool oneshot = ts[i].kind == KONE || ts[i].kind == PONE;

		r.pending_at_kill += is_pending(i) || (oneshot && __atomic_load_n(&ts[i].runs, __ATOMIC_RELAXED) > 0);
	}
	if (write(out, &r, sizeof(r)) != sizeof(r))
		_exit(2);
	read_all(in, when, sizeof(when));
	downtime = when[1];
	__atomic_store_n(&restarted_at, when[0], __ATOMIC_RELEASE);
	end = td_now() + DONE_TIMEOUT_NS;
	while (!all_done() && td_now() < end)
		td_sleep(10000000);
	/* A second run of a one-shot would come now, if at all. */
	td_sleep(300000000);
	for (int i = 0; i < n; i++) {
		if (ts[i].kind == KONE || ts[i].kind == KPER)
			clockd_del_timer_sync(&kt[i]);
		else
			clockd_timer_delete(ts[i].pt);
	}
	for (int i = 0; i < n; i++) {
		struct tstate *s = &ts[i];

		r.early += s->early;
		if (s->early) {
			printf("# client %d: timer %d (kind %d) early %llu times\n", (int)getpid(), i, (int)s->kind,
			       (unsigned long long)s->early);
			fflush(stdout);
		}
		r.errors += s->errors;
		if (s->kind == KONE || s->kind == PONE) {
			r.oneshots++;
			r.once += s->runs == 1;
			r.twice_or_more += s->runs > 1;
			r.never += s->runs == 0;
			continue;
		}
		r.periodic++;
		r.periodic_kept += s->runs_after >= PERIODS_AFTER;
		if (s->kind == PPER) {
			/* Overruns not counted leave every later expiry the
			 * downtime behind the clock. */
			if (s->min_lag < 0 || s->min_lag >= downtime / 2)
				r.overrun_gap++;
			if (s->min_lag > r.max_min_lag)
				r.max_min_lag = s->min_lag;
		}
	}
	r.unchecked = unchecked;
	if (write(out, &r, sizeof(r)) != sizeof(r))
		_exit(2);
	free(ts);
	free(kt);
	_exit(0);
}

static void part1(int total)
{
	struct report sum = { 0 }, r;
	int to[CLIENTS][2], from[CLIENTS][2];
	pid_t pid[CLIENTS];
	int64_t killed, when[2], t0 = td_now();
	int bad_exit = 0;

	for (int c = 0; c < CLIENTS; c++) {
		if (pipe(to[c]) < 0 || pipe(from[c]) < 0)
			tap_bail("pipe: %s", strerror(errno));
		fflush(stdout);
		pid[c] = fork();
		if (pid[c] < 0)
			tap_bail("fork: %s", strerror(errno));
		if (pid[c] == 0)
			client(total / CLIENTS, to[c][0], from[c][1]);
	}
	for (int c = 0; c < CLIENTS; c++) {
		read_all(from[c][0], &r, sizeof(r));
		sum.armed += r.armed;
		sum.pending_at_kill += r.pending_at_kill;
	}
	tap_ok(sum.armed == (uint64_t)total && sum.pending_at_kill == (uint64_t)total,
	       "%d clients armed %llu of %d timers, %llu pending (or, one-shots, run already)", CLIENTS,
	       (unsigned long long)sum.armed, total, (unsigned long long)sum.pending_at_kill);
	/* The kill 0.8 s after the arming began: the periodic timers run by
	 * then, and one-shots due from 1 s on expire while no daemon runs. */
	if (td_now() < t0 + stretch * 800000000)
		td_sleep(t0 + stretch * 800000000 - td_now());
	killed = td_now();
	td_stop(SIGKILL);
	td_sleep(200000000);
	td_start(NULL);
	when[0] = td_now();
	when[1] = when[0] - killed;
	downtime = when[1];
	tap_diag("daemon killed and serving again %.0f ms later", downtime / 1e6);
	for (int c = 0; c < CLIENTS; c++)
		if (write(to[c][1], when, sizeof(when)) != sizeof(when))
			tap_bail("write: %s", strerror(errno));
	memset(&sum, 0, sizeof(sum));
	for (int c = 0; c < CLIENTS; c++) {
		int st;

		read_all(from[c][0], &r, sizeof(r));
		sum.oneshots += r.oneshots;
		sum.once += r.once;
		sum.twice_or_more += r.twice_or_more;
		sum.never += r.never;
		sum.periodic += r.periodic;
		sum.periodic_kept += r.periodic_kept;
		sum.early += r.early;
		sum.unchecked += r.unchecked;
		sum.errors += r.errors;
		sum.overrun_gap += r.overrun_gap;
		if (r.max_min_lag > sum.max_min_lag)
			sum.max_min_lag = r.max_min_lag;
		bad_exit += waitpid(pid[c], &st, 0) != pid[c] || !WIFEXITED(st) || WEXITSTATUS(st) != 0;
		close(to[c][1]);
		close(from[c][0]);
	}
	tap_ok(bad_exit == 0, "the clients ended well (%d did not)", bad_exit);
	tap_ok(sum.oneshots > 0 && sum.once == sum.oneshots,
	       "every one-shot ran exactly once: %llu of %llu (%llu more than once, %llu never)",
	       (unsigned long long)sum.once, (unsigned long long)sum.oneshots,
	       (unsigned long long)sum.twice_or_more, (unsigned long long)sum.never);
	/* Unchecked: callbacks under way as the daemon died. Most of all
	 * of them would mean the clock could not be read at all. */
	tap_ok(sum.early == 0 && sum.unchecked < (uint64_t)total / 10,
	       "no callback early (%llu; %llu ran while the page was not live, unchecked)",
	       (unsigned long long)sum.early, (unsigned long long)sum.unchecked);
	tap_ok(sum.periodic > 0 && sum.periodic_kept == sum.periodic,
	       "every periodic timer ran %d more times after the restart: %llu of %llu", PERIODS_AFTER,
	       (unsigned long long)sum.periodic_kept, (unsigned long long)sum.periodic);
	tap_ok(sum.overrun_gap == 0,
	       "POSIX periodic timers counted the periods missed as overruns (%llu behind by half the "
	       "downtime or more; the largest least lag %.1f ms)",
	       (unsigned long long)sum.overrun_gap, sum.max_min_lag / 1e6);
	tap_ok(sum.errors == 0, "no call failed in a callback (%llu)", (unsigned long long)sum.errors);
}

static uint64_t fired[4];

static void count(struct clockd_timer *t, void *arg)
{
	(void)t;
	__atomic_fetch_add((uint64_t *)arg, 1, __ATOMIC_RELEASE);
}

static void on_sev(union sigval v)
{
	__atomic_fetch_add((uint64_t *)v.sival_ptr, 1, __ATOMIC_RELEASE);
}

/* Calls made while no daemon runs. */
static void part2(void)
{
	struct clockd_timer kept, cancelled, added;
	struct clockd_sigevent sev = { .notify = CLOCKD_SIGEV_THREAD_CPU, .cpu = -1, .fn = on_sev };
	clockd_timer_t deleted;
	struct itimerspec its = { .it_value = { .tv_sec = stretch / 2, .tv_nsec = stretch % 2 * 500000000 } };
	uint64_t hz = clockd_hz(), j = clockd_get_jiffies_64();
	int a, b, c, d, e;

	memset(fired, 0, sizeof(fired));
	clockd_timer_setup(&kept, count, &fired[0]);
	clockd_timer_setup(&cancelled, count, &fired[1]);
	clockd_timer_setup(&added, count, &fired[2]);
	sev.value.sival_ptr = &fired[3];
	a = clockd_add_timer(&kept, j + (uint64_t)stretch * hz / 2);
	b = clockd_add_timer(&cancelled, j + (uint64_t)stretch * hz / 2);
	c = clockd_timer_create(CLOCKD_MONOTONIC, &sev, &deleted);
	d = c == 0 ? clockd_timer_settime(deleted, 0, &its, NULL) : -1;
	tap_ok(a == 0 && b == 0 && c == 0 && d == 0, "three timers armed, %.1f s ahead", stretch * 0.5);
	td_stop(SIGKILL);
	td_sleep(50000000);
	a = clockd_del_timer(&cancelled);
	b = clockd_timer_delete(deleted);
	c = clockd_add_timer(&added, clockd_get_jiffies_64() + hz / 4);
	d = clockd_timer_pending(&kept);
	e = clockd_timer_pending(&added);
	tap_ok(a == 1 && b == 0 && c == 0 && d == 1 && e == 1,
	       "no daemon: a timer cancelled (%d), one deleted (%d), one armed (%d); pending: the kept %d, the new %d",
	       a, b, c, d, e);
	td_start(NULL);
	bool ran = td_wait_u64(&fired[0], 1, DONE_TIMEOUT_NS) && td_wait_u64(&fired[2], 1, DONE_TIMEOUT_NS);

	td_sleep(600000000);
	tap_ok(ran && fired[0] == 1 && fired[2] == 1 && fired[1] == 0 && fired[3] == 0,
	       "a new daemon: the kept and the new timer ran once (%llu, %llu), the cancelled and the deleted not "
	       "(%llu, %llu)",
	       (unsigned long long)fired[0], (unsigned long long)fired[2], (unsigned long long)fired[1],
	       (unsigned long long)fired[3]);
}

/* No daemon within the reconnect timeout: lost. */
static void part3(void)
{
	struct clockd_timer k, probe;
	struct clockd_sigevent sev = { .notify = CLOCKD_SIGEV_THREAD_CPU, .cpu = -1, .fn = on_sev };
	clockd_timer_t p;
	struct itimerspec its = { .it_value = { .tv_sec = 2 } }, v;
	uint64_t hz = clockd_hz();
	int r, err, kp, pp;

	memset(fired, 0, sizeof(fired));
	/* 1 s: long enough that the first look below, made at once, comes
	 * before it even on a loaded machine; the second look comes after it
	 * however late it wakes (the timers are 2 s ahead and no daemon can
	 * run them meanwhile). */
	tap_ok(clockd_set_reconnect_timeout(1000) == 0, "reconnect timeout set to 1000 ms");
	clockd_timer_setup(&k, count, &fired[0]);
	clockd_timer_setup(&probe, count, &fired[1]);
	sev.value.sival_ptr = &fired[2];
	r = clockd_add_timer(&k, clockd_get_jiffies_64() + 2 * hz);
	r |= clockd_timer_create(CLOCKD_MONOTONIC, &sev, &p);
	r |= clockd_timer_settime(p, 0, &its, NULL);
	tap_ok(r == 0, "a jiffies and a POSIX timer armed, 2 s ahead");
	td_stop(SIGKILL);
	td_sleep(10000000);
	kp = clockd_timer_pending(&k);
	tap_ok(kp == 1, "just after the daemon died: still pending (%d)", kp);
	td_sleep(1500000000);
	kp = clockd_timer_pending(&k);
	pp = clockd_timer_gettime(p, &v) == 0 && (v.it_value.tv_sec || v.it_value.tv_nsec);
	tap_ok(kp == 0 && pp == 0, "1.5 s without a daemon: lost, not pending (jiffies %d, POSIX %d)", kp, pp);
	td_start(NULL);
	r = clockd_add_timer(&probe, clockd_get_jiffies_64() + 1);
	err = errno;
	tap_ok(r == -1 && err == ECONNRESET, "the next arming call says ECONNRESET (%d, %s)", r,
	       r ? strerror(err) : "-");
	r = clockd_add_timer(&probe, clockd_get_jiffies_64() + 1);
	tap_ok(r == 0 && td_wait_u64(&fired[1], 1, DONE_TIMEOUT_NS), "the call after connects and its timer runs");
	td_sleep(1500000000);
	tap_ok(fired[0] == 0 && fired[2] == 0, "the lost timers never ran (%llu, %llu)",
	       (unsigned long long)fired[0], (unsigned long long)fired[2]);
	clockd_timer_delete(p);
	clockd_del_timer_sync(&probe);
}

/* A child in clockd_fd() mode: arm, say so, then dispatch until it ran. */
static void fd_client(int out)
{
	struct clockd_timer t;
	int efd = clockd_fd(), r;
	int64_t end;
	char c = 1;

	memset(fired, 0, sizeof(fired));
	clockd_timer_setup(&t, count, &fired[0]);
	r = clockd_add_timer(&t, clockd_get_jiffies_64() + (uint64_t)stretch * clockd_hz() / 2);
	if (efd < 0 || r < 0 || write(out, &c, 1) != 1)
		_exit(2);
	end = td_now() + DONE_TIMEOUT_NS;
	while (__atomic_load_n(&fired[0], __ATOMIC_ACQUIRE) == 0 && td_now() < end) {
		struct pollfd pfd = { .fd = efd, .events = POLLIN };

		if (poll(&pfd, 1, 10) > 0)
			clockd_dispatch();
	}
	td_sleep(300000000);
	clockd_dispatch();
	_exit(fired[0] == 1 ? 0 : 3);
}

/* The same through a restart after clockd_fd(): the new connection's
 * descriptors join the caller's epoll descriptor. */
static void part4(void)
{
	int p[2], st = -1;
	pid_t pid;
	char c;

	if (pipe(p) < 0)
		tap_bail("pipe: %s", strerror(errno));
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		tap_bail("fork: %s", strerror(errno));
	if (pid == 0)
		fd_client(p[1]);
	close(p[1]);
	if (read(p[0], &c, 1) != 1)
		c = 0;
	td_stop(SIGKILL);
	td_sleep(100000000);
	td_start(NULL);
	waitpid(pid, &st, 0);
	close(p[0]);
	tap_ok(c == 1 && WIFEXITED(st) && WEXITSTATUS(st) == 0,
	       "clockd_fd() mode: a timer armed before the kill ran once through clockd_dispatch() (status %d)",
	       WIFEXITED(st) ? WEXITSTATUS(st) : -1);
}

int main(void)
{
	const char *e = getenv("RESTART_TIMERS");
	int total = e && atoi(e) >= 400 ? atoi(e) : 10000;

	total -= total % (CLIENTS * 100);
	e = getenv("RESTART_STRETCH");
	if (e && atoi(e) > 1 && atoi(e) < 100)
		stretch = atoi(e);
	td_init();
	td_start(NULL);
	tap_plan(18);
	part4(); /* first: clockd_fd() fails in a child of a process that used timers */
	part1(total);
	part2();
	part3();
	td_stop(SIGTERM);
	return tap_done();
}
