/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A writer killed in the middle of an update. A child process creates and
 * takes a page with the daemon's code, publishes a plausible clock, starts
 * one more update (latch_write_begin, a few fields stored) and SIGKILLs
 * itself, leaving seq odd. Then, each in a fresh process (the library reads
 * CLOCKD_SHM once per process) under an alarm() hang guard:
 *  - latch_snapshot returns at once with the last complete data;
 *  - every clockd clock and clockd_get_jiffies_64 fail with ESTALE (the
 *    kernel set OWNER_DIED in the writer's robust futex word);
 *  - clockd_status says CLOCKD_STATE_GONE;
 *  - after clockd_set_fallback(1) the clocks read the kernel's time.
 * A reader run while the writer still lives is the control: it reads the
 * page's clock, not the kernel's.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <clockd/clockd.h>
#include "shared/latch.h"
#include "shared/tickmath.h"
#include "tests/tap.h"
#include "testpage.h"

/* A reader that takes longer than this is stuck (spinning on seq). */
#define HANG_GUARD_S 30

/* What the parent learns from the writer child. */
struct hello {
	char dir[256];
	char path[300];
};

struct ctx {
	struct hello where;
	struct clockd_page_data last; /* the last complete publication */
	pid_t writer;
	int to_writer, from_writer;
};

static bool read_full(int fd, void *buf, size_t len)
{
	char *p = buf;

	while (len > 0) {
		ssize_t r = read(fd, p, len);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return false;
		p += r;
		len -= (size_t)r;
	}
	return true;
}

static bool write_full(int fd, const void *buf, size_t len)
{
	return write(fd, buf, len) == (ssize_t)len; /* pipe writes <= PIPE_BUF are whole */
}

/* The writer child: never returns. */
static void writer_child(int to_parent, int from_parent)
{
	static struct test_page tp;
	struct hello h;
	struct clockd_page_data d, next, *copy;
	uint32_t seq;
	char go;

	if (tp_create(&tp) < 0)
		_exit(2);
	for (int i = 0; i < 3; i++) {
		tp_fill_clock(&d);
		latch_publish(tp.pf.pg, &d);
	}
	if (pagefile_take(&tp.pf) < 0)
		_exit(3);
	memset(&h, 0, sizeof(h));
	snprintf(h.dir, sizeof(h.dir), "%s", tp.dir);
	snprintf(h.path, sizeof(h.path), "%s", tp.path);
	if (!write_full(to_parent, &h, sizeof(h)) || !read_full(from_parent, &go, 1))
		_exit(4);
	tp_fill_clock(&d);
	latch_publish(tp.pf.pg, &d);
	if (!write_full(to_parent, &d, sizeof(d)))
		_exit(5);
	/* Die mid-update: readers were sent to the other copy; this one is
	 * half rewritten. */
	tp_fill_clock(&next);
	next.jiffies_64 += 1000000;
	copy = latch_write_begin(tp.pf.pg, &seq);
	STORE_RELAXED(&copy->jiffies_64, next.jiffies_64);
	STORE_RELAXED(&copy->cycle_last, next.cycle_last);
	STORE_RELAXED(&copy->mono_sec, next.mono_sec + 1000);
	raise(SIGKILL);
	_exit(6);
}

static bool start_writer(struct ctx *c)
{
	int up[2], down[2];

	if (pipe(up) < 0 || pipe(down) < 0)
		return false;
	fflush(stdout);
	c->writer = fork();
	if (c->writer < 0)
		return false;
	if (c->writer == 0) {
		close(up[0]);
		close(down[1]);
		writer_child(up[1], down[0]);
	}
	close(up[1]);
	close(down[0]);
	c->from_writer = up[0];
	c->to_writer = down[1];
	return read_full(c->from_writer, &c->where, sizeof(c->where));
}

/* Let the writer publish once more and die; true if it was SIGKILLed. */
static bool kill_writer(struct ctx *c, int *status)
{
	bool got = write_full(c->to_writer, "g", 1) &&
		   read_full(c->from_writer, &c->last, sizeof(c->last));

	if (waitpid(c->writer, status, 0) != c->writer)
		return false;
	return got && WIFSIGNALED(*status) && WTERMSIG(*status) == SIGKILL;
}

static const struct clockd_page *map_page(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	void *m;

	if (fd < 0)
		return NULL;
	m = mmap(NULL, CLOCKD_PAGE_SIZE, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	return m == MAP_FAILED ? NULL : m;
}

/* Scenarios: run in a fresh process; 0 = pass, else a diagnostic printed. */
struct scenario {
	const char *what;
	int (*run)(const struct ctx *c, clockid_t id);
	clockid_t id;
};

static const char *clock_name(clockid_t id)
{
	static const char *const names[CLOCKD_CLOCK_COUNT] = {
		"CLOCKD_REALTIME", "CLOCKD_MONOTONIC", "CLOCKD_MONOTONIC_RAW",
		"CLOCKD_REALTIME_COARSE", "CLOCKD_MONOTONIC_COARSE", "CLOCKD_TAI",
	};

	return names[id - CLOCKD_CLOCK_BASE];
}

static clockid_t kernel_clock(clockid_t id)
{
	static const clockid_t kernel[CLOCKD_CLOCK_COUNT] = {
		CLOCK_REALTIME, CLOCK_MONOTONIC, CLOCK_MONOTONIC_RAW,
		CLOCK_REALTIME_COARSE, CLOCK_MONOTONIC_COARSE, CLOCK_TAI,
	};

	return kernel[id - CLOCKD_CLOCK_BASE];
}

/* Control, writer alive: @id reads the page's clock (the test clock's
 * MONOTONIC is TP_MONO_OFFSET_SEC ahead of the kernel's raw clock). */
static int live_read(const struct ctx *c, clockid_t id)
{
	struct clockd_status st = { 0 };
	struct timespec ts;
	int64_t want = (kclock_ns(CLOCK_MONOTONIC_RAW) / (int64_t)NSEC_PER_SEC) + TP_MONO_OFFSET_SEC;

	if (clockd_clock_gettime(id, &ts) != 0) {
		tap_diag("%s: %s", clock_name(id), strerror(errno));
		return 1;
	}
	if (ts.tv_sec < want - 2 || ts.tv_sec > want + 2) {
		tap_diag("%s: %lld s, the page's clock is at %lld s", clock_name(id),
			 (long long)ts.tv_sec, (long long)want);
		return 1;
	}
	if (clockd_status(&st, sizeof(st)) != 0 || st.state != CLOCKD_STATE_LIVE) {
		tap_diag("status: state %u, want LIVE", st.state);
		return 1;
	}
	return 0;
}

static int snapshot_last(const struct ctx *c, clockid_t id)
{
	const struct clockd_page *pg = map_page(c->where.path);
	struct clockd_page_data got;
	const char *diff;

	if (!pg) {
		tap_diag("cannot map %s: %s", c->where.path, strerror(errno));
		return 1;
	}
	latch_snapshot(pg, &got); /* a hang here ends in SIGALRM */
	diff = tp_diff(&got, &c->last);
	if (diff)
		tap_diag("snapshot differs from the last complete update in %s", diff);
	return diff != NULL;
}

static int read_estale(const struct ctx *c, clockid_t id)
{
	struct timespec ts;
	int r = clockd_clock_gettime(id, &ts);

	if (r == -1 && errno == ESTALE)
		return 0;
	tap_diag("%s: returned %d, errno %d (%s)", clock_name(id), r, errno, strerror(errno));
	return 1;
}

static int jiffies_estale(const struct ctx *c, clockid_t id)
{
	uint64_t j;

	errno = 0;
	j = clockd_get_jiffies_64();
	if (j == 0 && errno == ESTALE)
		return 0;
	tap_diag("clockd_get_jiffies_64: %llu, errno %d (%s)", (unsigned long long)j, errno,
		 strerror(errno));
	return 1;
}

static int status_gone(const struct ctx *c, clockid_t id)
{
	struct clockd_status st = { 0 };

	if (clockd_status(&st, sizeof(st)) != 0) {
		tap_diag("clockd_status: %s", strerror(errno));
		return 1;
	}
	if (st.state == CLOCKD_STATE_GONE && st.errno_hint == ESTALE &&
	    st.jiffies_64 == c->last.jiffies_64)
		return 0;
	tap_diag("status: state %u (want %u), errno_hint %d, jiffies_64 %llu (last %llu)", st.state,
		 CLOCKD_STATE_GONE, st.errno_hint, (unsigned long long)st.jiffies_64,
		 (unsigned long long)c->last.jiffies_64);
	return 1;
}

/* After clockd_set_fallback(1): the kernel's clock, read between two reads
 * of that clock. */
static int read_fallback(const struct ctx *c, clockid_t id)
{
	struct timespec ts;
	int64_t before, got, after;

	if (clockd_set_fallback(1) != 0) {
		tap_diag("clockd_set_fallback: fallback was already on, or %s", strerror(errno));
		return 1;
	}
	before = kclock_ns(kernel_clock(id));
	if (clockd_clock_gettime(id, &ts) != 0) {
		tap_diag("%s with fallback: %s", clock_name(id), strerror(errno));
		return 1;
	}
	after = kclock_ns(kernel_clock(id));
	got = ts_to_ns(&ts);
	if (got >= before && got <= after)
		return 0;
	tap_diag("%s with fallback: %lld ns, not within the kernel's [%lld, %lld]", clock_name(id),
		 (long long)got, (long long)before, (long long)after);
	return 1;
}

static const struct scenario after_death[] = {
	{ "latch_snapshot returns the last complete update", snapshot_last, 0 },
	{ "CLOCKD_MONOTONIC fails with ESTALE", read_estale, CLOCKD_MONOTONIC },
	{ "CLOCKD_REALTIME fails with ESTALE", read_estale, CLOCKD_REALTIME },
	{ "CLOCKD_MONOTONIC_RAW fails with ESTALE", read_estale, CLOCKD_MONOTONIC_RAW },
	{ "CLOCKD_MONOTONIC_COARSE fails with ESTALE", read_estale, CLOCKD_MONOTONIC_COARSE },
	{ "CLOCKD_REALTIME_COARSE fails with ESTALE", read_estale, CLOCKD_REALTIME_COARSE },
	{ "clockd_get_jiffies_64 fails with ESTALE", jiffies_estale, 0 },
	{ "clockd_status: GONE, ESTALE, the last jiffies", status_gone, 0 },
	{ "fallback: CLOCKD_MONOTONIC reads the kernel's", read_fallback, CLOCKD_MONOTONIC },
	{ "fallback: CLOCKD_MONOTONIC_RAW reads the kernel's", read_fallback, CLOCKD_MONOTONIC_RAW },
	{ "fallback: CLOCKD_MONOTONIC_COARSE reads the kernel's", read_fallback, CLOCKD_MONOTONIC_COARSE },
};
#define N_AFTER (sizeof(after_death) / sizeof(after_death[0]))

/* Run @s in a fresh process with CLOCKD_SHM set and a hang guard. */
static bool run_scenario(const struct ctx *c, const struct scenario *s)
{
	pid_t pid;
	int status;

	fflush(stdout);
	pid = fork();
	if (pid < 0)
		tap_bail("fork: %s", strerror(errno));
	if (pid == 0) {
		alarm(HANG_GUARD_S);
		setenv("CLOCKD_SHM", c->where.path, 1);
		unsetenv("CLOCKD_FALLBACK");
		int r = s->run(c, s->id);
		fflush(stdout);
		_exit(r);
	}
	if (waitpid(pid, &status, 0) != pid)
		tap_bail("waitpid: %s", strerror(errno));
	if (WIFSIGNALED(status))
		tap_diag("%s: reader killed by signal %d%s", s->what, WTERMSIG(status),
			 WTERMSIG(status) == SIGALRM ? " (hang guard: it did not return)" : "");
	return tap_ok(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s", s->what);
}

static struct ctx c;

/* Also on tap_bail(): leave no page behind (the parent only). */
static void remove_page(void)
{
	if (c.writer > 0 && c.where.path[0]) {
		unlink(c.where.path);
		rmdir(c.where.dir);
	}
}

int main(void)
{
	static const struct scenario live = {
		"control, writer alive: CLOCKD_MONOTONIC reads the page, status LIVE", live_read,
		CLOCKD_MONOTONIC
	};
	const struct clockd_page *pg;
	uint32_t word;
	int status = 0;
	bool killed;

	tap_plan(4 + (int)N_AFTER);
	if (!start_writer(&c))
		tap_bail("the writer child did not start");
	atexit(remove_page);
	run_scenario(&c, &live);
	killed = kill_writer(&c, &status);
	if (!tap_ok(killed, "the writer died of SIGKILL mid-update (wait status %#x)", status))
		tap_bail("no dead writer to test against");
	pg = map_page(c.where.path);
	if (!pg)
		tap_bail("cannot map %s: %s", c.where.path, strerror(errno));
	tap_ok(LOAD_RELAXED(&pg->seq) & 1, "seq left odd (%u): the update was cut short",
	       LOAD_RELAXED(&pg->seq));
	word = LOAD_RELAXED((const uint32_t *)(const void *)pg->writer_lock);
	tap_ok(word & CLOCKD_PAGE_OWNER_DIED, "the kernel set OWNER_DIED in the writer word (%#x)", word);
	for (size_t i = 0; i < N_AFTER; i++)
		run_scenario(&c, &after_death[i]);
	return tap_done();
}
