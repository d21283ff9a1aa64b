/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Latch torture: one writer thread, pinned to the first CPU, publishes with
 * the daemon's own latch_publish() into a page made by pagefile.c, in a
 * tight loop; one reader thread pinned to each CPU (one of them sharing the
 * writer's) takes snapshots.
 *
 * Phase 1 (latch_snapshot): every copy is tp_fill(n) for the n in its
 * jiffies_64 (no torn read) and n never decreases in a reader (no backward
 * read). Phase 2 (the public API on the same page, found through
 * CLOCKD_SHM, the writer publishing a real clock): clockd_get_jiffies_64(),
 * CLOCKD_MONOTONIC_COARSE and CLOCKD_MONOTONIC never fail and never go
 * backwards in a reader.
 *
 * TORTURE_READS sets the phase 1 snapshot count (default 1e7, e.g. 1e9 for
 * a long manual run); phase 2 does a quarter as many API rounds.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <clockd/clockd.h>
#include "shared/latch.h"
#include "shared/tickmath.h"
#include "tests/tap.h"
#include "tests/util.h"
#include "testpage.h"

#define DEFAULT_READS 1e7
#define MAX_READERS 64

struct writer {
	struct clockd_page *pg;
	int cpu;
	bool clock;            /* phase 2: publish tp_fill_clock() */
	int stop;              /* atomic: set when the readers are done */
	uint64_t published;
	double seconds;
};

struct reader {
	const struct clockd_page *pg;
	int cpu;
	uint64_t reads;        /* to do, then done */
	uint64_t torn, backward, moved, failed;
	uint64_t bad_n;        /* the step of the first torn copy */
	const char *bad_field; /* and its first wrong field */
	int bad_errno;         /* the first failure's errno (phase 2) */
};

static double now_s(void)
{
	return (double)kclock_ns(CLOCK_MONOTONIC) / 1e9;
}

static void pin(int cpu, const char *who)
{
	if (!tu_pin(cpu))
		tap_diag("%s: cannot pin to CPU %d (%s); running unpinned", who, cpu, strerror(errno));
}

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	struct clockd_page_data d;
	double t0;
	uint64_t n = 0;

	pin(w->cpu, "writer");
	t0 = now_s();
	while (!__atomic_load_n(&w->stop, __ATOMIC_RELAXED)) {
		n++;
		if (w->clock)
			tp_fill_clock(&d);
		else
			tp_fill(&d, n);
		latch_publish(w->pg, &d);
	}
	w->seconds = now_s() - t0;
	w->published = n;
	return NULL;
}

static void note_torn(struct reader *r, const struct clockd_page_data *got, uint64_t n)
{
	struct clockd_page_data want;

	tp_fill(&want, n);
	if (r->torn++ == 0) {
		r->bad_n = n;
		r->bad_field = tp_diff(got, &want);
	}
}

/* Phase 1: raw snapshots. */
static void *snapshot_reader(void *arg)
{
	struct reader *r = arg;
	struct clockd_page_data got, want;
	uint64_t n, prev = 0;

	pin(r->cpu, "reader");
	for (uint64_t i = 0; i < r->reads; i++) {
		latch_snapshot(r->pg, &got);
		n = tp_step(&got);
		tp_fill(&want, n);
		if (memcmp(&got, &want, sizeof(got)) != 0)
			note_torn(r, &got, n);
		if (n < prev)
			r->backward++;
		else if (n > prev && i > 0)
			r->moved++;
		prev = n;
	}
	return NULL;
}

/* One value a phase 2 reader follows. */
struct track {
	int64_t prev;
	bool seen;
};

static void track(struct reader *r, struct track *t, int ok, int64_t v)
{
	if (!ok) {
		if (r->failed++ == 0)
			r->bad_errno = errno;
		return;
	}
	if (t->seen && v < t->prev)
		r->backward++;
	t->prev = v;
	t->seen = true;
}

/* Phase 2: the public API. */
static void *api_reader(void *arg)
{
	struct reader *r = arg;
	struct track jif = { 0 }, coarse = { 0 }, fine = { 0 };
	struct timespec ts = { 0 };
	uint64_t j, first_j = 0;
	int ok;

	pin(r->cpu, "reader");
	for (uint64_t i = 0; i < r->reads; i++) {
		errno = 0;
		j = clockd_get_jiffies_64();
		track(r, &jif, j != 0, (int64_t)j);
		if (i == 0)
			first_j = j;
		ok = clockd_clock_gettime(CLOCKD_MONOTONIC_COARSE, &ts) == 0;
		track(r, &coarse, ok, ts_to_ns(&ts));
		ok = clockd_clock_gettime(CLOCKD_MONOTONIC, &ts) == 0;
		track(r, &fine, ok, ts_to_ns(&ts));
	}
	r->moved = jif.prev > (int64_t)first_j;
	return NULL;
}

struct phase {
	struct writer w;
	struct reader r[MAX_READERS];
	int nreaders;
	uint64_t reads, torn, backward, failed;
	bool all_moved;
};

static void run_phase(struct phase *ph, void *(*reader_main)(void *))
{
	pthread_t wt, rt[MAX_READERS];

	if (pthread_create(&wt, NULL, writer_main, &ph->w) != 0)
		tap_bail("cannot start the writer thread");
	for (int i = 0; i < ph->nreaders; i++)
		if (pthread_create(&rt[i], NULL, reader_main, &ph->r[i]) != 0)
			tap_bail("cannot start reader thread %d", i);
	ph->all_moved = true;
	for (int i = 0; i < ph->nreaders; i++) {
		pthread_join(rt[i], NULL);
		ph->reads += ph->r[i].reads;
		ph->torn += ph->r[i].torn;
		ph->backward += ph->r[i].backward;
		ph->failed += ph->r[i].failed;
		ph->all_moved = ph->all_moved && ph->r[i].moved > 0;
	}
	__atomic_store_n(&ph->w.stop, 1, __ATOMIC_RELAXED);
	pthread_join(wt, NULL);
}

static void setup_phase(struct phase *ph, struct clockd_page *pg, const int *cpus, int ncpus,
			uint64_t reads, bool clock)
{
	memset(ph, 0, sizeof(*ph));
	ph->w.pg = pg;
	ph->w.cpu = cpus[0];
	ph->w.clock = clock;
	ph->nreaders = ncpus;
	for (int i = 0; i < ncpus; i++) {
		ph->r[i].pg = pg;
		ph->r[i].cpu = cpus[i];
		ph->r[i].reads = reads / (uint64_t)ncpus + 1;
	}
}

static void report_writer(const struct phase *ph, const char *what)
{
	tap_diag("%s: writer published %llu updates in %.2f s: %.0f kHz (not a pass/fail figure)",
		 what, (unsigned long long)ph->w.published, ph->w.seconds,
		 ph->w.seconds > 0 ? (double)ph->w.published / ph->w.seconds / 1e3 : 0.0);
}

static void phase_snapshots(struct clockd_page *pg, const int *cpus, int ncpus, uint64_t reads)
{
	static struct phase ph;

	setup_phase(&ph, pg, cpus, ncpus, reads, false);
	run_phase(&ph, snapshot_reader);
	report_writer(&ph, "latch_snapshot");
	for (int i = 0; i < ncpus; i++)
		if (ph.r[i].torn)
			tap_diag("reader on CPU %d: %llu torn, the first at step %llu (field %s)",
				 ph.r[i].cpu, (unsigned long long)ph.r[i].torn,
				 (unsigned long long)ph.r[i].bad_n, ph.r[i].bad_field);
	tap_ok(ph.torn == 0, "latch_snapshot: %llu reads by %d readers, %llu torn",
	       (unsigned long long)ph.reads, ncpus, (unsigned long long)ph.torn);
	tap_ok(ph.backward == 0, "latch_snapshot: %llu backward reads", (unsigned long long)ph.backward);
	tap_ok(ph.all_moved, "latch_snapshot: every reader saw the writer move on");
}

static void phase_api(struct test_page *tp, const int *cpus, int ncpus, uint64_t reads)
{
	static struct phase ph;
	struct clockd_page_data d;

	/* Readers must find a clock, not phase 1's hashes, from their first read. */
	tp_fill_clock(&d);
	latch_publish(tp->pf.pg, &d);
	setup_phase(&ph, tp->pf.pg, cpus, ncpus, reads, true);
	run_phase(&ph, api_reader);
	report_writer(&ph, "public API");
	for (int i = 0; i < ncpus; i++)
		if (ph.r[i].failed)
			tap_diag("reader on CPU %d: %llu failed reads, the first with errno %d (%s)",
				 ph.r[i].cpu, (unsigned long long)ph.r[i].failed,
				 ph.r[i].bad_errno, strerror(ph.r[i].bad_errno));
	tap_ok(ph.failed == 0, "public API: %llu rounds of jiffies_64, MONOTONIC_COARSE, MONOTONIC: %llu failed",
	       (unsigned long long)ph.reads, (unsigned long long)ph.failed);
	tap_ok(ph.backward == 0, "public API: %llu values went backwards", (unsigned long long)ph.backward);
	tap_ok(ph.all_moved, "public API: every reader saw jiffies advance");
}

static uint64_t reads_wanted(void)
{
	const char *s = getenv("TORTURE_READS");
	char *end;
	double v;

	if (!s || !*s)
		return (uint64_t)DEFAULT_READS;
	v = strtod(s, &end);
	if (*end || v < 1 || v > 1e15)
		tap_bail("TORTURE_READS=%s: want a count such as 1e9", s);
	return (uint64_t)v;
}

static struct test_page tp;

/* Also on tap_bail(): leave no page behind. */
static void remove_page(void)
{
	tp_destroy(&tp);
}

int main(void)
{
	int cpus[MAX_READERS];
	int ncpus = tu_cpus(cpus, MAX_READERS);
	uint64_t reads = reads_wanted();
	struct clockd_page_data d;

	tap_plan(7);
	if (ncpus < 1)
		tap_bail("no CPU to run on");
	tap_diag("%d CPUs; writer on CPU %d; %llu snapshots wanted", ncpus, cpus[0],
		 (unsigned long long)reads);
	if (tp_create(&tp) < 0)
		tap_bail("cannot create a test page");
	atexit(remove_page);
	/* As the daemon: a first publication, then ownership. */
	tp_fill(&d, 0);
	latch_publish(tp.pf.pg, &d);
	if (!tap_ok(pagefile_take(&tp.pf) == 0, "pagefile_take on %s", tp.path))
		tap_bail("the page cannot be taken");
	phase_snapshots(tp.pf.pg, cpus, ncpus, reads);
	if (setenv("CLOCKD_SHM", tp.path, 1) < 0)
		tap_bail("setenv: %s", strerror(errno));
	phase_api(&tp, cpus, ncpus, reads / 4);
	return tap_done();
}
