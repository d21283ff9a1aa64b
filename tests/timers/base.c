/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The per-CPU timer bases (src/clockd/timers/timerbase.h) against a live page: a
 * clockd started here, the bases in this process, and the client's side
 * played on the shared memory (tbclient.h).
 *
 * Environment: BASE_EXPIRIES (default 100000) expiries for the never-early
 * run, BASE_MANY (default 1000000) timers for the arm-and-cancel run (the
 * TSan build runs smaller ones).
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <clockd/clockd.h>
#include "tests/tap.h"
#include "tests/util.h"
#include "clockd/timers/wakelead.h"
#include "timers/tbclient.h"

#define WAIT_S 20 /* generous deadline for anything we wait for */
#define MAX_TIMERS (1u << 20)
#define RING_SLOTS 256u

static struct timer_bases *tb;
static int ntests;

#define OK(cond, ...) (ntests++, tap_ok((cond), __VA_ARGS__))

static unsigned env_uint(const char *name, unsigned dflt)
{
	const char *s = getenv(name);

	return s && *s ? (unsigned)strtoul(s, NULL, 10) : dflt;
}

static uint64_t deadline_kns(unsigned s)
{
	return tbc_kns() + (uint64_t)s * 1000000000u;
}

static struct timerrec arm_rec(uint32_t id, uint32_t gen, uint8_t clock, uint16_t flags, uint64_t expires,
			       uint64_t period)
{
	struct timerrec t = { .op = TREC_ARM, .clock = clock, .flags = flags, .timer_id = id, .gen = gen,
			      .expires = expires, .period = period };

	return t;
}

static struct timerrec cancel_rec(uint32_t id)
{
	struct timerrec t = { .op = TREC_CANCEL, .timer_id = id };

	return t;
}

/* Wait until the client's pending count is @want (stats are updated by the
 * bases at the end of each round). */
static bool wait_pending(struct tbc *t, uint64_t want)
{
	uint64_t end = deadline_kns(WAIT_S * 3);
	struct tb_client_stats st;

	do {
		tb_client_stats(tb, t->c, &st);
		if (st.pending == want)
			return true;
		tbc_sleep_us(1000);
	} while (tbc_kns() < end);
	tap_diag("pending %" PRIu64 ", waited for %" PRIu64, st.pending, want);
	return false;
}

/* Pop from ring pair @k until @want records are in @out (or the deadline). */
static unsigned collect(struct tbc *t, unsigned k, struct timerrec *out, unsigned want)
{
	uint64_t end = deadline_kns(WAIT_S);
	unsigned got = 0;

	while (got < want && tbc_kns() < end) {
		int n = tbc_pop(t, k, out + got, want - got);

		if (n == 0)
			tbc_sleep_us(200);
		got += (unsigned)n;
	}
	return got;
}

static unsigned total_records(struct tbc *t)
{
	unsigned n = 0;

	for (unsigned k = 0; k < t->n; k++) {
		int c = ring_count(&t->deliv[k]);

		n += c > 0 ? (unsigned)c : 0;
	}
	return n;
}

static void show_lateness(const char *what);

/* ---- pinning ---- */

/* The thread id of the base thread of @cpu ("clockd-tb/N"), 0 if none. */
static pid_t base_tid(unsigned cpu)
{
	char want[32], path[300], comm[64];
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	pid_t tid = 0;

	snprintf(want, sizeof(want), "clockd-tb/%u\n", cpu);
	while (!tid && d && (e = readdir(d))) {
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(comm, sizeof(comm), f) && strcmp(comm, want) == 0)
			tid = (pid_t)atoi(e->d_name);
		fclose(f);
	}
	if (d)
		closedir(d);
	return tid;
}

/* The base thread of @cpu: its allowed CPUs are {cpu}. */
static bool thread_pinned(unsigned cpu)
{
	pid_t tid = base_tid(cpu);
	cpu_set_t set;

	if (!tid) {
		tap_diag("no thread named clockd-tb/%u", cpu);
		return false;
	}
	return sched_getaffinity(tid, sizeof(set), &set) == 0 && CPU_COUNT(&set) == 1 && CPU_ISSET(cpu, &set);
}

/* Context switches of base thread clockd-tb/@cpu so far: its wake-ups
 * (a sleep in epoll_wait is one voluntary switch), 0 if not found; its CPU
 * time in *@cpu_ns (schedstat). */
static uint64_t base_switches(unsigned cpu, uint64_t *cpu_ns)
{
	char path[300], line[128];
	pid_t tid = base_tid(cpu);
	uint64_t n = 0;
	FILE *f;

	*cpu_ns = 0;
	if (!tid)
		return 0;
	snprintf(path, sizeof(path), "/proc/self/task/%d/schedstat", (int)tid);
	f = fopen(path, "r");
	if (f && fgets(line, sizeof(line), f))
		*cpu_ns = strtoull(line, NULL, 10);
	if (f)
		fclose(f);
	snprintf(path, sizeof(path), "/proc/self/task/%d/status", (int)tid);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, "voluntary_ctxt_switches:", 24) == 0)
			n += strtoull(line + 24, NULL, 10);
	if (f)
		fclose(f);
	return n;
}

/* A jiffies and a ns timer armed on ring pair k fire in k's delivery ring
 * (only base k produces it), and base k's thread is pinned to its CPU. */
static void test_pinned(void)
{
	struct tbc t;
	struct timerrec a = arm_rec(1, 11, CTL_CLOCK_JIFFIES, 0, 2, 0);
	struct timerrec b = arm_rec(2, 12, CTL_CLOCK_MONOTONIC, 0, 1000000, 0);
	struct timerrec got[2];

	if (!tbc_open(&t, tb))
		tap_bail("tb_client_new: %s", strerror(errno));
	for (unsigned k = 0; k < t.n; k++) {
		struct tb_cpu_stats cs;
		unsigned n;

		timer_bases_cpu_stats(tb, k, &cs);
		tbc_push(&t, k, &a);
		tbc_push(&t, k, &b);
		n = collect(&t, k, got, 2);
		OK(n == 2 && got[0].op == TREC_FIRE && got[1].op == TREC_FIRE &&
			   got[0].timer_id + got[1].timer_id == 3 && total_records(&t) == 0,
		   "CPU %u: both timers fired in its delivery ring (%u records), none elsewhere", t.cpu[k], n);
		OK(cs.cpu == t.cpu[k] && thread_pinned(t.cpu[k]), "CPU %u: the base thread runs pinned to it",
		   t.cpu[k]);
	}
	tbc_close(&t, tb);
}

/* ---- lateness on quiet bases (figures only: timing is no pass/fail) ---- */

/* First on fresh bases, so that their statistics are this run's alone: a
 * 1 ms periodic ns timer and a 1-jiffy periodic timer per CPU for 500 ms;
 * the records must form exact chains. */
static void test_quiet(void)
{
	uint64_t d0 = tbc_now(CTL_CLOCK_MONOTONIC) + 1000000, j0 = tbc_now(CTL_CLOCK_JIFFIES) + 1, end;
	uint64_t last[2][TIMER_SHM_MAX_CPUS] = { { 0 } }, expiries = 0;
	struct timerrec r[256];
	unsigned bad = 0;
	struct tbc t;

	if (!tbc_open(&t, tb))
		tap_bail("tb_client_new: %s", strerror(errno));
	for (unsigned k = 0; k < t.n; k++) {
		struct timerrec a = arm_rec(0, 1, CTL_CLOCK_MONOTONIC, CTL_ARM_ABSTIME | CTL_ARM_PERIODIC, d0, 1000000);
		struct timerrec b = arm_rec(1, 1, CTL_CLOCK_JIFFIES, CTL_ARM_ABSTIME | CTL_ARM_PERIODIC, j0, 1);

		tbc_push(&t, k, &a);
		tbc_push(&t, k, &b);
	}
	end = d0 + 500000000;
	while (tbc_now(CTL_CLOCK_MONOTONIC) < end) {
		for (unsigned k = 0; k < t.n; k++) {
			int n = tbc_pop(&t, k, r, 256);

			for (int i = 0; i < n; i++) {
				uint32_t id = r[i].timer_id;
				uint64_t step = id ? 1 : 1000000, first = id ? j0 : d0;
				uint64_t want = last[id][k] ? last[id][k] + (1 + r[i].overrun) * step
							    : first + r[i].overrun * step;

				bad += r[i].op != TREC_FIRE || id > 1 || r[i].expires != want ||
				       tbc_now(id ? CTL_CLOCK_JIFFIES : CTL_CLOCK_MONOTONIC) < r[i].expires;
				last[id][k] = r[i].expires;
				expiries += 1 + r[i].overrun;
			}
		}
		tbc_sleep_us(500);
	}
	OK(bad == 0 && expiries > 0, "quiet periodic timers: %" PRIu64 " expiries, exact chains, none early (%u bad)",
	   expiries, bad);
	show_lateness("quiet (1 ms ns + 1 jiffy periodic)");
	tbc_close(&t, tb);
}

/* ---- the socket path ---- */

static void test_socket_path(void)
{
	struct tbc t;
	struct ctl_arm arm = { .timer_id = 5, .clock = CTL_CLOCK_MONOTONIC, .expires = 1000000 };
	struct ctl_arm far = { .timer_id = 6, .clock = CTL_CLOCK_JIFFIES, .expires = 1000000 };
	struct timerrec got;
	int r;

	if (!tbc_open(&t, tb))
		tap_bail("tb_client_new: %s", strerror(errno));
	arm.cpu = far.cpu = t.cpu[t.n - 1];
	r = tb_client_arm(tb, t.c, &arm, 9);
	OK(r == 0 && collect(&t, t.n - 1, &got, 1) == 1 && got.op == TREC_FIRE && got.timer_id == 5 &&
		   got.gen == 9,
	   "tb_client_arm: the FIRE arrives with the generation given (r %d)", r);
	r = tb_client_arm(tb, t.c, &far, 10);
	OK(r == 0 && wait_pending(&t, 1), "tb_client_arm: a far timer is pending");
	r = tb_client_cancel(tb, t.c, 6);
	OK(r == 0 && wait_pending(&t, 0) && total_records(&t) == 0,
	   "tb_client_cancel: nothing pending, nothing delivered");
	arm.cpu = TIMER_SHM_MAX_CPUS;
	OK(tb_client_arm(tb, t.c, &arm, 1) == -ENXIO, "tb_client_arm on a CPU without a base: -ENXIO");
	tbc_close(&t, tb);
}

/* ---- never early: mixed timers, each FIRE checked on arrival ---- */

#define MASS_TIMERS 1000u
#define MASS_PERIODIC_RECORDS 20u /* then a periodic timer is re-armed */

struct mt {
	unsigned k;          /* ring pair */
	uint8_t clock;
	bool armed, periodic, exact;
	uint32_t gen;
	uint64_t lo;         /* the (first) expiry is >= lo; == lo if exact */
	uint64_t period;
	uint64_t last;       /* periodic: expires of its last record, 0: none */
	unsigned records;
};

struct mass {
	uint64_t fires, expiries, early, wrong, stale;
	uint64_t by_clock[3];
};

static uint64_t rnd(uint64_t n)
{
	return (uint64_t)random() % n;
}

/* Arm @m (timer @id) anew: clock, absolute or relative, one-shot or
 * periodic, picked at random. Mostly short delays; some jiffies timers
 * far enough to land at wheel level 1 and 2. */
static void mass_arm(struct tbc *t, struct mt *m, uint32_t id)
{
	bool abs = rnd(2), jiffies;
	uint64_t delay, now;
	uint16_t flags;

	m->clock = (uint8_t)rnd(3);
	jiffies = m->clock == CTL_CLOCK_JIFFIES;
	m->periodic = rnd(4) == 0;
	m->period = m->periodic ? (jiffies ? 1 + rnd(3) : 200000 + rnd(2000000)) : 0;
	delay = jiffies ? (rnd(10) ? rnd(5) : rnd(300)) : rnd(3000000);
	now = tbc_now(m->clock);
	m->gen++;
	m->armed = true;
	m->exact = abs;
	m->lo = now + delay;
	m->last = 0;
	m->records = 0;
	flags = (uint16_t)((abs ? CTL_ARM_ABSTIME : 0) | (m->periodic ? CTL_ARM_PERIODIC : 0));
	struct timerrec a = arm_rec(id, m->gen, m->clock, flags, abs ? now + delay : delay, m->period);
	tbc_push(t, m->k, &a);
}

/* A FIRE of the current generation: its expiry(ies) against what was
 * armed, and the clock now against its expiry. */
static bool mass_check(struct mt *m, const struct timerrec *r, struct mass *st)
{
	uint64_t first = r->expires - r->overrun * m->period;

	if (tbc_now(m->clock) < r->expires)
		st->early++;
	if (!m->periodic)
		return r->overrun == 0 && (m->exact ? r->expires == m->lo : r->expires >= m->lo);
	if (m->last)
		return r->expires == m->last + (1 + r->overrun) * m->period;
	return m->exact ? first == m->lo : first >= m->lo;
}

static void mass_fire(struct tbc *t, struct mt *timers, const struct timerrec *r, struct mass *st)
{
	struct mt *m;

	if (r->op != TREC_FIRE || r->timer_id >= MASS_TIMERS) {
		if (st->wrong++ < 5)
			tap_diag("unexpected record op %#x id %u error %d", r->op, r->timer_id, r->error);
		return;
	}
	m = &timers[r->timer_id];
	if (r->gen != m->gen) {
		st->stale++; /* a periodic timer re-armed meanwhile */
		return;
	}
	if (!m->armed || !mass_check(m, r, st)) {
		if (st->wrong++ < 5)
			tap_diag("timer %u (clock %u, periodic %d, lo %" PRIu64 ", last %" PRIu64 "): expires %" PRIu64
				 " overrun %" PRIu64 "%s", r->timer_id, m->clock, m->periodic, m->lo, m->last,
				 r->expires, r->overrun, m->armed ? "" : " after it fired");
		return;
	}
	st->fires++;
	st->expiries += 1 + r->overrun;
	st->by_clock[m->clock]++;
	m->last = r->expires;
	if (!m->periodic || ++m->records == MASS_PERIODIC_RECORDS) {
		m->armed = false;
		mass_arm(t, m, r->timer_id);
	}
}

static void show_lateness(const char *what)
{
	struct tb_cpu_stats cs;

	for (unsigned k = 0; timer_bases_cpu_stats(tb, k, &cs) == 0; k++)
		tap_diag("%s: CPU %u fired %" PRIu64 " overruns %" PRIu64 ", lateness p50 %" PRIu64 " ns, p99 %" PRIu64
			 " ns, max %" PRIu64 " ns", what, cs.cpu, cs.fired, cs.overruns, cs.late_p50_ns,
			 cs.late_p99_ns, cs.late_max_ns);
}

static void test_never_early(void)
{
	static struct mt timers[MASS_TIMERS];
	unsigned want = env_uint("BASE_EXPIRIES", 100000);
	uint64_t end = deadline_kns(WAIT_S * 6);
	struct mass st = { 0 };
	struct timerrec r[256];
	struct tbc t;

	if (!tbc_open(&t, tb))
		tap_bail("tb_client_new: %s", strerror(errno));
	srandom(42);
	for (uint32_t id = 0; id < MASS_TIMERS; id++) {
		timers[id].k = id % t.n;
		mass_arm(&t, &timers[id], id);
	}
	while (st.fires < want && tbc_kns() < end) {
		int got = 0;

		for (unsigned k = 0; k < t.n; k++) {
			int n = tbc_pop(&t, k, r, 256);

			for (int i = 0; i < n; i++)
				mass_fire(&t, timers, &r[i], &st);
			got += n;
		}
		if (!got)
			tbc_sleep_us(100);
	}
	for (uint32_t id = 0; id < MASS_TIMERS; id++) {
		struct timerrec c = cancel_rec(id);

		tbc_push(&t, timers[id].k, &c);
	}
	tap_diag("%" PRIu64 " FIRE records checked (%" PRIu64 " expiries; jiffies %" PRIu64 ", monotonic %" PRIu64
		 ", realtime %" PRIu64 "), %" PRIu64 " stale after a re-arm", st.fires, st.expiries,
		 st.by_clock[0], st.by_clock[1], st.by_clock[2], st.stale);
	OK(st.fires >= want, "%" PRIu64 " of %u expiries seen", st.fires, want);
	OK(st.early == 0, "never early: %" PRIu64 " of %" PRIu64 " FIRE records before their expiry", st.early,
	   st.fires);
	OK(st.wrong == 0, "each fired once, at the expiry armed, periodic overruns consistent (%" PRIu64 " wrong)",
	   st.wrong);
	OK(wait_pending(&t, 0), "all cancelled: nothing pending");
	show_lateness("mixed timers");
	tbc_close(&t, tb);
}

/* ---- equal deadlines armed at the same jiffy run in arm order ---- */

static bool in_order(const struct timerrec *r, unsigned n, uint32_t lo, uint32_t hi)
{
	uint32_t next = lo;

	for (unsigned i = 0; i < n; i++) {
		if (r[i].timer_id < lo || r[i].timer_id >= hi)
			continue;
		if (r[i].op != TREC_FIRE || r[i].timer_id != next)
			return false;
		next++;
	}
	return next == hi;
}

static void test_equal_deadlines(void)
{
	struct timerrec r[200];
	uint64_t j, ns;
	struct tbc t;
	unsigned n;

	if (!tbc_open(&t, tb))
		tap_bail("tb_client_new: %s", strerror(errno));
	j = tbc_now(CTL_CLOCK_JIFFIES) + 30;
	ns = tbc_now(CTL_CLOCK_MONOTONIC) + 30000000;
	/* Interleaved, so that arm order differs from any per-clock grouping. */
	for (uint32_t id = 0; id < 100; id++) {
		struct timerrec a = arm_rec(id, 1, CTL_CLOCK_JIFFIES, CTL_ARM_ABSTIME, j, 0);
		struct timerrec b = arm_rec(100 + id, 1, CTL_CLOCK_MONOTONIC, CTL_ARM_ABSTIME, ns, 0);

		tbc_push(&t, 0, &a);
		tbc_push(&t, 0, &b);
	}
	n = collect(&t, 0, r, 200);
	OK(n == 200 && in_order(r, n, 0, 100), "100 jiffies timers of one expiry fired in arm order");
	OK(n == 200 && in_order(r, n, 100, 200), "100 ns timers of one deadline fired in arm order");
	tbc_close(&t, tb);
}

/* ---- a full delivery ring loses nothing ---- */

#define FULL_ONESHOTS 400u

struct full {
	uint64_t d0, period, last, total, overruns;
	unsigned records, oneshots, bad;
	bool seen[FULL_ONESHOTS + 1];
};

static void full_take(struct full *f, const struct timerrec *r)
{
	if (r->op != TREC_FIRE || r->timer_id > FULL_ONESHOTS) {
		f->bad++;
		return;
	}
	if (r->timer_id > 0) {
		f->bad += f->seen[r->timer_id] || r->overrun;
		f->seen[r->timer_id] = true;
		f->oneshots++;
		return;
	}
	/* The periodic timer: each record continues the chain exactly. */
	if ((f->last ? f->last + (1 + r->overrun) * f->period : f->d0 + r->overrun * f->period) != r->expires)
		f->bad++;
	f->last = r->expires;
	f->records++;
	f->total += 1 + r->overrun;
	f->overruns += r->overrun;
}

static void test_full_ring(void)
{
	static struct full f;
	struct timerrec r[256];
	uint64_t tpop, t1, end, lo, hi;
	struct tbc t;

	if (!tbc_open(&t, tb))
		tap_bail("tb_client_new: %s", strerror(errno));
	memset(&f, 0, sizeof(f));
	f.period = 1000000;
	f.d0 = tbc_now(CTL_CLOCK_MONOTONIC) + 2000000;
	struct timerrec p = arm_rec(0, 1, CTL_CLOCK_MONOTONIC, CTL_ARM_ABSTIME | CTL_ARM_PERIODIC, f.d0, f.period);
	tbc_push(&t, 0, &p);
	for (uint32_t id = 1; id <= FULL_ONESHOTS; id++) {
		struct timerrec a = arm_rec(id, 1, CTL_CLOCK_MONOTONIC, 0, 1000000 + id * 10000, 0);

		tbc_push(&t, 0, &a);
	}
	/* Nobody pops for 200 ms of the timer's life. */
	while (tbc_now(CTL_CLOCK_MONOTONIC) < f.d0 + 200 * f.period)
		tbc_sleep_us(1000);
	tpop = tbc_now(CTL_CLOCK_MONOTONIC);
	end = deadline_kns(WAIT_S);
	while ((f.oneshots < FULL_ONESHOTS || f.last < tpop) && tbc_kns() < end) {
		int n = tbc_pop(&t, 0, r, 256);

		for (int i = 0; i < n; i++)
			full_take(&f, &r[i]);
		if (!n)
			tbc_sleep_us(200);
	}
	t1 = tbc_now(CTL_CLOCK_MONOTONIC);
	lo = (tpop - f.d0) / f.period + 1;
	hi = (t1 - f.d0) / f.period + 1;
	tap_diag("periodic: %u records, %" PRIu64 " expiries (%" PRIu64 " as overruns); %" PRIu64 " .. %" PRIu64
		 " elapsed", f.records, f.total, f.overruns, lo, hi);
	OK(f.oneshots == FULL_ONESHOTS && f.bad == 0, "all %u one-shots arrived once each (%u; %u bad records)",
	   FULL_ONESHOTS, f.oneshots, f.bad);
	OK(f.last >= tpop && f.total == (f.last - f.d0) / f.period + 1 && f.total + 1 >= lo && f.total <= hi + 1,
	   "periodic: records + overruns == expiries elapsed, none lost");
	OK(f.overruns > 0 && f.records < f.total, "periodic: expiries coalesced while the ring was full");
	struct timerrec c = cancel_rec(0);
	tbc_push(&t, 0, &c);
	OK(wait_pending(&t, 0), "periodic cancelled");
	tbc_close(&t, tb);
}

/* ---- a client that never pops and keeps re-arming ---- */

#define FLOOD_IDS 4096u
#define FLOOD_MAX_TIMERS 8192u

/* Each round re-arms FLOOD_IDS timers due at once: each fires, and its
 * re-arm voids its undelivered FIRE. An anchor timer, fired once after the
 * ring filled, keeps its FIRE at the head of the backlog, so the voided
 * records pile up behind it. On bases of FLOOD_MAX_TIMERS timers a client,
 * the backlog holds at most FLOOD_MAX_TIMERS + TB_SUB_BUDGET records: the
 * rounds make many more, which must be squeezed out for none to be
 * dropped. */
static void test_backlog_bounded(const struct tb_params *good)
{
	unsigned rounds = env_uint("BASE_FLOOD_ROUNDS", 20), left = FLOOD_IDS + 1, n;
	struct timer_bases *main_tb = tb;
	struct tb_params p = *good;
	static bool seen[FLOOD_IDS + 1];
	struct tb_client_stats st;
	struct timerrec r[256];
	uint64_t end;
	struct tbc t;

	p.max_timers = FLOOD_MAX_TIMERS;
	if (timer_bases_start(&tb, &p) < 0) /* the helpers here use tb */
		tap_bail("timer_bases_start");
	if (!tbc_open(&t, tb))
		tap_bail("tb_client_new: %s", strerror(errno));
	memset(seen, 0, sizeof(seen));
	for (uint32_t g = 1; g <= rounds; g++) {
		for (uint32_t id = 0; id < FLOOD_IDS; id++) {
			struct timerrec a = arm_rec(id, g, CTL_CLOCK_MONOTONIC, 0, 0, 0);

			tbc_push(&t, 0, &a);
		}
		if (g == 1) {
			struct timerrec anchor = arm_rec(FLOOD_IDS, rounds, CTL_CLOCK_MONOTONIC, 0, 0, 0);

			tbc_push(&t, 0, &anchor);
		}
	}
	OK(wait_pending(&t, 0), "%u re-arms of %u timers never popped: all fired", rounds * FLOOD_IDS, FLOOD_IDS);
	end = deadline_kns(WAIT_S);
	while (left && tbc_kns() < end) {
		n = (unsigned)tbc_pop(&t, 0, r, 256);
		for (unsigned i = 0; i < n; i++) {
			if (r[i].op == TREC_FIRE && r[i].gen == rounds && r[i].timer_id <= FLOOD_IDS &&
			    !seen[r[i].timer_id]) {
				seen[r[i].timer_id] = true;
				left--;
			}
		}
		if (!n)
			tbc_sleep_us(200);
	}
	tb_client_stats(tb, t.c, &st);
	OK(left == 0 && st.dropped == 0,
	   "the last FIRE of each, and the anchor's, arrived (%u missing), none dropped (%" PRIu64 ")", left,
	   st.dropped);
	tbc_close(&t, tb);
	timer_bases_stop(tb);
	tb = main_tb;
}

/* ---- the expiry budget holds for one-shots re-armed from callbacks ---- */

#define BUDGET_RATE 1000u
#define BUDGET_IDS 512u

/* A client re-arming BUDGET_IDS one-shot jiffies timers (mod_timer(t,
 * jiffies + 1)) and as many ns ones (due at once) as each fires, for
 * BASE_BUDGET_S seconds, on bases with a budget of BUDGET_RATE expiries a
 * second: it gets about its budget (bursts of a tenth of a second), not
 * the millions a second the callbacks could make; nothing is refused.
 * Run on bases of its own, after the others are stopped. */
static void test_budget_oneshots(const struct tb_params *good)
{
	unsigned secs = env_uint("BASE_BUDGET_S", 3);
	struct tb_params p = *good;
	uint64_t t0, t1, jiffies_fires = 0, ns_fires = 0, ceiling;
	struct tb_client_stats st;
	struct timerrec r[256];
	struct tbc t;

	p.max_expiries_per_sec = BUDGET_RATE;
	tb = tbc_bases_start(&p); /* the helpers here use tb; ticked */
	if (!tbc_open(&t, tb))
		tap_bail("tb_client_new: %s", strerror(errno));
	t0 = tbc_kns();
	for (uint32_t id = 0; id < 2 * BUDGET_IDS; id++) {
		struct timerrec a = id < BUDGET_IDS ? arm_rec(id, 1, CTL_CLOCK_JIFFIES, 0, 1, 0)
						    : arm_rec(id, 1, CTL_CLOCK_MONOTONIC, 0, 0, 0);

		tbc_push(&t, 0, &a);
	}
	while ((t1 = tbc_kns()) < t0 + (uint64_t)secs * 1000000000u) {
		int n = tbc_pop(&t, 0, r, 256);

		for (int i = 0; i < n; i++) {
			struct timerrec a;

			if (r[i].op != TREC_FIRE)
				continue;
			if (r[i].timer_id < BUDGET_IDS) {
				jiffies_fires++;
				a = arm_rec(r[i].timer_id, 1, CTL_CLOCK_JIFFIES, 0, 1, 0);
			} else {
				ns_fires++;
				a = arm_rec(r[i].timer_id, 1, CTL_CLOCK_MONOTONIC, 0, 0, 0);
			}
			tbc_push(&t, 0, &a);
		}
		if (n == 0)
			tbc_sleep_us(200);
	}
	tb_client_stats(tb, t.c, &st);
	/* The budget over the run, its burst, and a tenth for the rounding
	 * of the turns. */
	ceiling = (uint64_t)BUDGET_RATE * (t1 - t0) / 1000000000u * 11 / 10 + BUDGET_RATE / 10;
	OK(st.fired <= ceiling && jiffies_fires + ns_fires <= st.fired,
	   "one-shots re-armed from their callbacks keep to the budget: %" PRIu64 " expiries in %.1f s "
	   "(ceiling %" PRIu64 ", budget %u/s)", st.fired, (double)(t1 - t0) / 1e9, ceiling, BUDGET_RATE);
	OK(jiffies_fires > 0 && ns_fires > 0 && st.fired >= (uint64_t)BUDGET_RATE * secs / 4 && st.dropped == 0,
	   "and are served, late, not refused: %" PRIu64 " jiffies and %" PRIu64 " ns callbacks, %" PRIu64
	   " dropped", jiffies_fires, ns_fires, st.dropped);
	tbc_close(&t, tb);
	tbc_bases_stop(tb);
	tb = NULL;
}

/* ---- a client over budget costs a wake-up per batch, not per token ---- */

#define BATCH_RATE 10000u
#define BATCH_IDS 1000u

/* BATCH_IDS periodic ns timers of 100 us at spread phases (the abuse of
 * #16), popped as they come, for BASE_BUDGET_S seconds against a budget of
 * BATCH_RATE a second: the client gets its budget with the rest in
 * overruns, and the base thread wakes up for batches of turns (at most
 * one a millisecond, and some slack), not once per token. */
/* Account a record of the batched run: each FIRE is a period of its
 * timer (phase @first + id * 97, period 100 us), in order, its overrun
 * the periods before it since the last one, and never early. */
struct acct {
	uint64_t first, last[BATCH_IDS], count[BATCH_IDS];
	unsigned bad;
};

static void acct_take(struct acct *a, const struct timerrec *r, unsigned n)
{
	uint64_t now = tbc_now(CTL_CLOCK_MONOTONIC);

	for (unsigned i = 0; i < n; i++) {
		uint32_t id = r[i].timer_id;
		uint64_t e0 = a->first + id * 97u, x = r[i].expires;

		if (r[i].op != TREC_FIRE || id >= BATCH_IDS || x < e0 || (x - e0) % 100000 ||
		    x > now || (a->count[id] && x <= a->last[id]) ||
		    (x - e0) / 100000 + 1 != a->count[id] + 1 + r[i].overrun) {
			if (a->bad++ < 3)
				tap_diag("record %u: op %u id %u expires %" PRIu64 " overrun %" PRIu64
					 " (periods %" PRIu64 " before)", i, r[i].op, id, x, r[i].overrun,
					 a->count[id < BATCH_IDS ? id : 0]);
			continue;
		}
		a->count[id] += 1 + r[i].overrun;
		a->last[id] = x;
	}
}

static void test_budget_batched(const struct tb_params *good)
{
	unsigned secs = env_uint("BASE_BUDGET_S", 3), n;
	struct tb_params p = *good;
	uint64_t t0, t1, w0, w1, c0, c1, ceiling, per_s;
	struct tb_client_stats st;
	static struct acct acct;
	struct timerrec r[256];
	struct tbc t;

	p.max_expiries_per_sec = BATCH_RATE;
	p.min_period_ns = 100000;
	tb = tbc_bases_start(&p); /* the helpers here use tb; ticked */
	if (!tbc_open(&t, tb))
		tap_bail("tb_client_new: %s", strerror(errno));
	memset(&acct, 0, sizeof(acct));
	acct.first = tbc_now(CTL_CLOCK_MONOTONIC) + 1000000;
	for (uint32_t id = 0; id < BATCH_IDS; id++) {
		struct timerrec a = arm_rec(id, 1, CTL_CLOCK_MONOTONIC, CTL_ARM_PERIODIC | CTL_ARM_ABSTIME,
					    acct.first + id * 97u, 100000);

		tbc_push(&t, 0, &a);
	}
	tbc_sleep_us(300000); /* past the first burst */
	while ((n = (unsigned)tbc_pop(&t, 0, r, 256)) > 0)
		acct_take(&acct, r, n);
	tb_client_stats(tb, t.c, &st);
	w0 = base_switches(t.cpu[0], &c0);
	t0 = tbc_kns();
	ceiling = st.fired;
	while ((t1 = tbc_kns()) < t0 + (uint64_t)secs * 1000000000u) {
		n = (unsigned)tbc_pop(&t, 0, r, 256);
		acct_take(&acct, r, n);
		if (n == 0)
			tbc_sleep_us(1000);
	}
	w1 = base_switches(t.cpu[0], &c1);
	tb_client_stats(tb, t.c, &st);
	per_s = (w1 - w0) * 1000000000u / (t1 - t0);
	ceiling += (uint64_t)BATCH_RATE * (t1 - t0) / 1000000000u * 11 / 10 + BATCH_RATE / 10;
	OK(st.fired <= ceiling && st.overruns > st.fired,
	   "1000 timers of 100 us over a budget of %u/s: %" PRIu64 " expiries (ceiling %" PRIu64 "), %" PRIu64
	   " overruns", BATCH_RATE, st.fired, ceiling, st.overruns);
	OK(acct.bad == 0,
	   "each FIRE a period of its timer, in order, none early, its overrun the periods since the last "
	   "(%u wrong)", acct.bad);
	OK(w0 > 0 && per_s <= 2500,
	   "its base woke %" PRIu64 " times a second (bound 2500: batches of turns), used %.1f%% of its CPU",
	   per_s, (double)(c1 - c0) * 100 / (double)(t1 - t0));
	tbc_close(&t, tb);
	tbc_bases_stop(tb);
	tb = NULL;
}

/* ---- the raised lead of a self-waking client (wakelead.h) ---- */

#define LEAD_PERIOD_NS 2000000u
#define LEAD_WARM 100u
#define LEAD_COUNT 300u
#define LEAD_GAP_NS 5000u

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * A SCHED_OTHER client (lead timer_lead_other_ns, 1 us here) whose
 * delivery ring says it wakes by itself (at 0: always in time, so the
 * base never writes its eventfd) gets its records the base's measured
 * round lateness plus WAKE_LEAD_MARGIN_NS early, not 1 us. This thread,
 * on another CPU than the base's, reads a 2 ms periodic timer's records
 * as they come, and takes how early each came only where it was looking
 * the moment before and after (its looks LEAD_GAP_NS or less apart: not
 * off its CPU, as beside a busy loop): the median must be
 * WAKE_LEAD_MARGIN_NS / 2 or more (at the configured lead, at most 1 us),
 * and no record is early by more than the longest lead.
 */
static void test_self_wake_lead(const struct tb_params *good)
{
	static uint64_t early[LEAD_COUNT];
	struct tb_params p = *good;
	uint64_t end, med, last;
	unsigned got = 0, n = 0, bad = 0;
	cpu_set_t old;
	struct timerrec a;
	struct tbc t;

	if (__builtin_popcountll(good->cpu_mask) < 2) {
		tap_skip("the raised lead: one CPU here, and the reader must not share the base's");
		ntests++;
		return;
	}
	p.lead_other_ns = 1000;
	tb = tbc_bases_start(&p);
	if (!tbc_open(&t, tb))
		tap_bail("tb_client_new: %s", strerror(errno));
	tb_client_lead(tb, t.c, false);
	/* Read from pair 1's CPU, so that the base of pair 0 is not held off. */
	if (sched_getaffinity(0, sizeof(old), &old) < 0)
		tap_bail("sched_getaffinity: %s", strerror(errno));
	if (!tu_pin((int)t.cpu[1]))
		tap_bail("pinning to CPU %u: %s", t.cpu[1], strerror(errno));
	if (!ring_prepare_wait_until(&t.deliv[0], 0))
		tap_bail("the delivery ring is not empty");
	a = arm_rec(0, 1, CTL_CLOCK_MONOTONIC, CTL_ARM_ABSTIME | CTL_ARM_PERIODIC,
		    tbc_now(CTL_CLOCK_MONOTONIC) + LEAD_PERIOD_NS, LEAD_PERIOD_NS);
	tbc_push(&t, 0, &a);
	end = deadline_kns(WAIT_S);
	last = tbc_now(CTL_CLOCK_MONOTONIC);
	while (n < LEAD_COUNT && tbc_kns() < end) {
		uint64_t now = tbc_now(CTL_CLOCK_MONOTONIC), gap = now - last;
		struct timerrec r;

		last = now;
		if (ring_count(&t.deliv[0]) <= 0)
			continue;
		if (tbc_pop(&t, 0, &r, 1) != 1 || r.op != TREC_FIRE) {
			bad++;
			continue;
		}
		/* Taken after the pop: the record was there by then. */
		now = tbc_now(CTL_CLOCK_MONOTONIC);
		bad += r.expires > now + WAKE_LEAD_MAX_NS;
		if (++got > LEAD_WARM && gap <= LEAD_GAP_NS && now - last <= LEAD_GAP_NS)
			early[n++] = r.expires > now ? r.expires - now : 0;
		last = now;
	}
	ring_cancel_wait(&t.deliv[0]);
	sched_setaffinity(0, sizeof(old), &old);
	qsort(early, n, sizeof(early[0]), cmp_u64);
	med = n ? early[n / 2] : 0;
	OK(n == LEAD_COUNT && bad == 0 && med >= WAKE_LEAD_MARGIN_NS / 2,
	   "a self-waking client with a 1 us lead gets its records %" PRIu64 " us early at the median "
	   "(%" PRIu64 "-%" PRIu64 " us; want %u or more: the base's lateness plus %u us), %u of %u seen "
	   "as they came (of %u), %u bad",
	   med / 1000, n ? early[0] / 1000 : 0, n ? early[n - 1] / 1000 : 0, WAKE_LEAD_MARGIN_NS / 2000,
	   WAKE_LEAD_MARGIN_NS / 1000, n, LEAD_COUNT, got, bad);
	tbc_close(&t, tb);
	tbc_bases_stop(tb);
	tb = NULL;
}

/* ---- 1e6 pending, cancelled, none fires ---- */

static void test_many(void)
{
	unsigned many = env_uint("BASE_MANY", 1000000);
	uint64_t j = tbc_now(CTL_CLOCK_JIFFIES) + 1000000, t0 = tbc_kns(), t1, t2;
	struct tb_client_stats st;
	struct tbc t;

	if (!tbc_open(&t, tb))
		tap_bail("tb_client_new: %s", strerror(errno));
	for (uint32_t id = 0; id < many; id++) {
		struct timerrec a = id % 2 ? arm_rec(id, 1, CTL_CLOCK_MONOTONIC, 0, 1000000000000ull, 0)
					   : arm_rec(id, 1, CTL_CLOCK_JIFFIES, CTL_ARM_ABSTIME, j, 0);

		tbc_push(&t, id % t.n, &a);
	}
	OK(wait_pending(&t, many), "%u timers pending", many);
	t1 = tbc_kns();
	for (uint32_t id = 0; id < many; id++) {
		struct timerrec c = cancel_rec(id);

		tbc_push(&t, id % t.n, &c);
	}
	OK(wait_pending(&t, 0), "all %u cancelled", many);
	t2 = tbc_kns();
	tb_client_stats(tb, t.c, &st);
	OK(total_records(&t) == 0 && st.fired == 0 && st.dropped == 0,
	   "none fired, no error (fired %" PRIu64 ", dropped %" PRIu64 ")", st.fired, st.dropped);
	tap_diag("%u armed in %.0f ms, cancelled in %.0f ms (through the rings)", many, (t1 - t0) / 1e6,
		 (t2 - t1) / 1e6);
	tbc_close(&t, tb);
}

/* ---- tb_client_free with timers pending ---- */

static uint64_t bases_fired(void)
{
	struct tb_cpu_stats cs;
	uint64_t n = 0;

	for (unsigned k = 0; timer_bases_cpu_stats(tb, k, &cs) == 0; k++)
		n += cs.fired;
	return n;
}

static bool bases_empty(void)
{
	uint64_t end = deadline_kns(WAIT_S);
	struct tb_cpu_stats cs;
	bool empty;

	do {
		empty = true;
		for (unsigned k = 0; timer_bases_cpu_stats(tb, k, &cs) == 0; k++)
			empty = empty && cs.clients == 0 && cs.pending_jiffies == 0 && cs.pending_ns == 0;
		if (!empty)
			tbc_sleep_us(1000);
	} while (!empty && tbc_kns() < end);
	return empty;
}

static void test_free_pending(void)
{
	uint64_t fired, after, end;
	unsigned records;
	struct tbc t;

	if (!tbc_open(&t, tb))
		tap_bail("tb_client_new: %s", strerror(errno));
	for (unsigned k = 0; k < t.n; k++) {
		for (uint32_t i = 0; i < 50; i++) {
			struct timerrec a = arm_rec(4 * i, 1, CTL_CLOCK_JIFFIES, 0, 5, 0);
			struct timerrec b = arm_rec(4 * i + 1, 1, CTL_CLOCK_MONOTONIC, 0, 5000000, 0);
			struct timerrec c = arm_rec(4 * i + 2, 1, CTL_CLOCK_REALTIME, CTL_ARM_PERIODIC, 5000000, 1000000);
			struct timerrec d = arm_rec(4 * i + 3, 1, CTL_CLOCK_JIFFIES, 0, 100000, 0);

			tbc_push(&t, k, &a);
			tbc_push(&t, k, &b);
			tbc_push(&t, k, &c);
			tbc_push(&t, k, &d);
		}
	}
	tb_client_free(tb, t.c); /* our mapping stays: we watch the rings */
	fired = bases_fired();
	records = total_records(&t);
	end = tbc_now(CTL_CLOCK_MONOTONIC) + 50000000;
	while (tbc_now(CTL_CLOCK_MONOTONIC) < end)
		tbc_sleep_us(1000);
	after = bases_fired();
	OK(after == fired && total_records(&t) == records,
	   "nothing fired after tb_client_free (fired %" PRIu64 " -> %" PRIu64 ", records %u -> %u)", fired, after,
	   records, total_records(&t));
	OK(bases_empty(), "the bases show no client and nothing pending");
	munmap(t.mem, t.size);
}

/* ---- invalid records and a hostile ring ---- */

static void test_hostile(void)
{
	struct timerrec bad1 = arm_rec(3, 7, 9, 0, 1000, 0);
	struct timerrec bad2 = arm_rec(MAX_TIMERS, 8, CTL_CLOCK_JIFFIES, 0, 1, 0);
	struct timerrec far = arm_rec(4, 1, CTL_CLOCK_JIFFIES, 0, 1000000, 0);
	struct timerrec c = cancel_rec(5), got[3];
	struct tb_client_stats st;
	struct ring_rec raw;
	struct tbc a, b;
	uint64_t end, one = 1;
	unsigned n;
	bool broken, served = true;

	if (!tbc_open(&a, tb) || !tbc_open(&b, tb))
		tap_bail("tb_client_new: %s", strerror(errno));
	tbc_push(&a, 0, &bad1);
	tbc_push(&a, 0, &bad2);
	timerrec_encode(&c, &raw);
	raw.word[2] = 1; /* a CANCEL with an unused word set */
	tbc_push_raw(&a, 0, &raw);
	n = collect(&a, 0, got, 3);
	OK(n == 3 && got[0].op == TREC_ERROR && got[0].timer_id == 3 && got[0].gen == 7 &&
		   got[0].error == EINVAL && got[1].op == TREC_ERROR && got[1].timer_id == MAX_TIMERS &&
		   got[1].gen == 8 && got[2].op == TREC_ERROR && got[2].timer_id == 5,
	   "invalid records get ERROR EINVAL records naming them (%u)", n);
	tb_client_stats(tb, a.c, &st);
	OK(st.dropped == 3 && !tb_client_broken(a.c), "counted as dropped (%" PRIu64 "), client still served",
	   st.dropped);
	tbc_push(&a, 0, &far);
	OK(wait_pending(&a, 1), "a timer pending before the corruption");
	/* A tail beyond the ring: the base must refuse the ring. */
	__atomic_store_n(&a.sub[0].hdr->tail, a.sub[0].hdr->head + a.sub[0].slots + 100, __ATOMIC_RELEASE);
	if (write(a.sub_efd[0], &one, sizeof(one)) < 0)
		tap_bail("write: %s", strerror(errno));
	end = deadline_kns(WAIT_S);
	while (!(broken = tb_client_broken(a.c)) && tbc_kns() < end)
		tbc_sleep_us(1000);
	OK(broken, "a corrupt submission ring marks the client broken");
	OK(wait_pending(&a, 0), "its timers are gone");
	for (unsigned k = 0; k < b.n; k++) {
		struct timerrec x = arm_rec(1, 2, CTL_CLOCK_MONOTONIC, 0, 1000000, 0);

		tbc_push(&b, k, &x);
		served = served && collect(&b, k, got, 1) == 1 && got[0].op == TREC_FIRE;
	}
	OK(served && !tb_client_broken(b.c), "another client keeps being served on every CPU");
	tbc_close(&a, tb);
	tbc_close(&b, tb);
}

/* A client that rewrites its delivery ring's head out of range is
 * refused when the base next looks at it (a full ring). */
static void test_hostile_delivery(void)
{
	uint64_t end;
	bool broken;
	struct tbc a;

	if (!tbc_open(&a, tb))
		tap_bail("tb_client_new: %s", strerror(errno));
	__atomic_store_n(&a.deliv[0].hdr->head, a.deliv[0].hdr->tail + 5000, __ATOMIC_RELEASE);
	for (uint32_t id = 0; id <= RING_SLOTS; id++) {
		struct timerrec x = arm_rec(id, 1, CTL_CLOCK_MONOTONIC, 0, 0, 0);

		tbc_push(&a, 0, &x);
	}
	end = deadline_kns(WAIT_S);
	while (!(broken = tb_client_broken(a.c)) && tbc_kns() < end)
		tbc_sleep_us(1000);
	OK(broken, "a corrupt delivery ring marks the client broken");
	tbc_close(&a, tb);
}

/* An invalid ARM of a pending id leaves it not pending, as its ERROR says. */
static void test_invalid_rearm(void)
{
	struct timerrec far = arm_rec(9, 1, CTL_CLOCK_JIFFIES, 0, 1000000, 0);
	struct timerrec bad = arm_rec(9, 2, CTL_CLOCK_MONOTONIC, CTL_ARM_PERIODIC, 1000, 10);
	struct timerrec got;
	struct tbc a;

	if (!tbc_open(&a, tb))
		tap_bail("tb_client_new: %s", strerror(errno));
	tbc_push(&a, 0, &far);
	OK(wait_pending(&a, 1), "a timer pending");
	tbc_push(&a, 0, &bad); /* period 10 ns < CTL_MIN_PERIOD_NS */
	OK(collect(&a, 0, &got, 1) == 1 && got.op == TREC_ERROR && got.timer_id == 9 && got.gen == 2 &&
		   wait_pending(&a, 0),
	   "a refused re-arm: ERROR EINVAL, and the id is no longer pending");
	tbc_close(&a, tb);
}

/* ---- start-up errors ---- */

static void *fifo_probe(void *arg)
{
	struct sched_param sp = { .sched_priority = 1 };

	*(int *)arg = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
	return NULL;
}

static void test_start_errors(const struct tb_params *good)
{
	struct tb_params p = *good;
	struct timer_bases *x = (void *)1;
	pthread_t th;
	cpu_set_t set;
	int fifo = -1, r;
	unsigned outside = TIMER_SHM_MAX_CPUS;

	sched_getaffinity(0, sizeof(set), &set);
	for (unsigned cpu = 0; cpu < TIMER_SHM_MAX_CPUS && outside == TIMER_SHM_MAX_CPUS; cpu++)
		if (!CPU_ISSET(cpu, &set))
			outside = cpu;
	p.cpu_mask |= 1ull << outside;
	r = timer_bases_start(&x, &p);
	OK(r == -1 && x == NULL, "a CPU outside the affinity (%u) fails the start, nothing started", outside);
	p = *good;
	p.clock.now_ns = NULL;
	x = (void *)1;
	r = timer_bases_start(&x, &p);
	OK(r == -1 && x == NULL, "no clock to run on fails the start, nothing started");
	p = *good;
	p.priority = 1;
	if (pthread_create(&th, NULL, fifo_probe, &fifo) == 0)
		pthread_join(th, NULL);
	x = NULL;
	r = timer_bases_start(&x, &p);
	/* Refused or not, the bases run: SCHED_OTHER when refused (logged). */
	OK(r == 0 && x, "SCHED_FIFO 1: the start %s (a thread's own request is %s)",
	   r == 0 ? "succeeds" : "fails", fifo == 0 ? "granted" : strerror(fifo));
	if (x)
		timer_bases_stop(x);
}

int main(void)
{
	struct tb_params p = { .clock = tbc_clock, .priority = 0, .hz = 1000, .ring_slots = RING_SLOTS,
			       .max_timers = MAX_TIMERS };
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set) < 0)
		tap_bail("sched_getaffinity: %s", strerror(errno));
	for (unsigned cpu = 0; cpu < TIMER_SHM_MAX_CPUS; cpu++)
		if (CPU_ISSET(cpu, &set))
			p.cpu_mask |= 1ull << cpu;
	test_start_errors(&p);
	tb = tbc_bases_start(&p);
	test_quiet();
	test_pinned();
	test_socket_path();
	test_equal_deadlines();
	test_hostile();
	test_hostile_delivery();
	test_invalid_rearm();
	test_full_ring();
	test_never_early();
	test_many();
	test_backlog_bounded(&p);
	test_free_pending();
	tbc_bases_stop(tb);
	test_budget_oneshots(&p);
	test_budget_batched(&p);
	test_self_wake_lead(&p);
	tap_plan(ntests);
	return tap_done();
}
