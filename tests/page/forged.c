/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Forged pages (issue #16): whoever can put a file where a client looks for
 * its page, or write a page, must not be able to kill or hang the reader.
 * Each case runs in a fresh process (the library reads CLOCKD_SHM once per
 * process) under an alarm() hang guard, and must end in a read that fails
 * with EPROTO (or ENOENT for a path that is not there), never a signal:
 *  - $CLOCKD_SHM an empty file, a FIFO, /dev/zero, a directory, a short
 *    file, a file of random bytes, a page with one byte too many;
 *  - a well-formed page whose vclock_mode is HPET or PHC and whose
 *    vclock_path is an empty regular file, a FIFO, /dev/zero, a path
 *    outside /dev, a path climbing out of /dev;
 *  - the control: the same page with CLOCKD_VCLOCK_NONE reads.
 * "forged extreme PATH" writes a page that looks live and holds seconds
 * no nanosecond count can (for tests/clockctl/cli.sh: clockctl saturates).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <clockd/clockd.h>
#include <clockd/page.h>
#include "tests/tap.h"

/* A read that takes longer than this hangs. */
#define HANG_GUARD_S 10
/* Child exit codes. */
#define CHILD_OK 0
#define CHILD_WRONG 1

static char dir[] = "/tmp/clockd-forged.XXXXXX";
static char path_buf[4][400];

static const char *in_dir(int slot, const char *name)
{
	snprintf(path_buf[slot], sizeof(path_buf[slot]), "%s/%s", dir, name);
	return path_buf[slot];
}

static void write_file(const char *path, const void *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd < 0 || write(fd, buf, len) != (ssize_t)len || close(fd) != 0)
		tap_bail("cannot write %s: %s", path, strerror(errno));
}

/* A page a daemon could have written, its writer gone, with @mode and
 * @vpath as the counter to read. */
static void write_page(const char *path, uint32_t mode, const char *vpath)
{
	static struct clockd_page pg;

	memset(&pg, 0, sizeof(pg));
	pg.magic = CLOCKD_PAGE_MAGIC;
	pg.abi_version = CLOCKD_PAGE_ABI;
	pg.size = CLOCKD_PAGE_SIZE;
	pg.hz = 1000;
	pg.generation = 7;
	pg.stale_ns = 1000000000;
	snprintf(pg.vclock_path, sizeof(pg.vclock_path), "%s", vpath);
	for (int i = 0; i < 2; i++) {
		pg.data[i].vclock_mode = mode;
		pg.data[i].mask = UINT64_MAX;
		pg.data[i].max_cycles = UINT64_MAX;
		pg.data[i].mult = 1;
		pg.data[i].raw_mult = 1;
	}
	write_file(path, &pg, sizeof(pg));
}

/* In a child: read CLOCKD_MONOTONIC with the page at @page; the read must
 * fail with @want. */
static void child_read(const char *page, int want)
{
	struct timespec ts;
	int rc;

	alarm(HANG_GUARD_S);
	setenv("CLOCKD_SHM", page, 1);
	unsetenv("CLOCKD_FALLBACK");
	errno = 0;
	rc = clockd_clock_gettime(CLOCKD_MONOTONIC, &ts);
	if (rc == 0 && want == 0)
		_exit(CHILD_OK);
	if (rc != 0 && errno == want)
		_exit(CHILD_OK);
	fprintf(stderr, "# read gave %d, errno %d (%s), wanted errno %d\n", rc, errno,
		strerror(errno), want);
	_exit(CHILD_WRONG);
}

static void expect(const char *what, const char *page, int want)
{
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0)
		tap_bail("fork: %s", strerror(errno));
	if (pid == 0)
		child_read(page, want);
	if (waitpid(pid, &status, 0) != pid)
		tap_bail("waitpid: %s", strerror(errno));
	if (WIFSIGNALED(status)) {
		tap_ok(false, "%s: killed by signal %d%s", what, WTERMSIG(status),
		       WTERMSIG(status) == SIGALRM ? " (hung)" : "");
		return;
	}
	tap_ok(WIFEXITED(status) && WEXITSTATUS(status) == CHILD_OK, "%s: %s", what,
	       want ? strerror(want) : "reads");
}

static void forged_files(void)
{
	static uint8_t rnd[CLOCKD_PAGE_SIZE];
	const char *empty = in_dir(0, "empty"), *fifo = in_dir(1, "fifo");

	write_file(empty, "", 0);
	if (mkfifo(fifo, 0644) < 0)
		tap_bail("mkfifo: %s", strerror(errno));
	expect("page: an empty file", empty, EPROTO);
	expect("page: a FIFO", fifo, EPROTO);
	expect("page: /dev/zero", "/dev/zero", EPROTO);
	expect("page: a directory", dir, EPROTO);
	for (size_t i = 0; i < sizeof(rnd); i++)
		rnd[i] = (uint8_t)random();
	write_file(in_dir(2, "random"), rnd, sizeof(rnd));
	expect("page: random bytes", path_buf[2], EPROTO);
	write_page(in_dir(2, "short"), CLOCKD_VCLOCK_NONE, "");
	if (truncate(path_buf[2], CLOCKD_PAGE_SIZE - 1) < 0)
		tap_bail("truncate: %s", strerror(errno));
	expect("page: one byte short", path_buf[2], EPROTO);
	write_page(in_dir(2, "long"), CLOCKD_VCLOCK_NONE, "");
	if (truncate(path_buf[2], CLOCKD_PAGE_SIZE + 1) < 0)
		tap_bail("truncate: %s", strerror(errno));
	expect("page: one byte long", path_buf[2], EPROTO);
}

static void forged_vclock(uint32_t mode, const char *name)
{
	static const char *const targets[][2] = {
		{ "an empty regular file", NULL }, /* filled in: in_dir(0) */
		{ "a FIFO", NULL },                /* in_dir(1) */
		{ "/dev/zero", "/dev/zero" },
		{ "/dev/null", "/dev/null" },
		{ "outside /dev", "/etc/passwd" },
		{ "climbing out of /dev", "/dev/../etc/passwd" },
	};
	char what[160];
	const char *page = in_dir(3, "page");

	for (size_t i = 0; i < sizeof(targets) / sizeof(targets[0]); i++) {
		const char *target = targets[i][1] ? targets[i][1] : path_buf[i];

		write_page(page, mode, target);
		snprintf(what, sizeof(what), "%s vclock_path: %s", name, targets[i][0]);
		expect(what, page, EPROTO);
	}
}

/* A page whose writer looks alive (any TID in the futex word) with
 * realtime near +2^63/1000 s and monotonic near -2^63/1000 s. */
static int write_extreme(const char *path)
{
	static struct clockd_page pg;
	uint32_t tid = (uint32_t)getpid();

	memset(&pg, 0, sizeof(pg));
	pg.magic = CLOCKD_PAGE_MAGIC;
	pg.abi_version = CLOCKD_PAGE_ABI;
	pg.size = CLOCKD_PAGE_SIZE;
	pg.hz = 1000;
	pg.generation = 7;
	pg.stale_ns = UINT64_MAX / 2;
	memcpy(pg.writer_lock, &tid, sizeof(tid));
	for (int i = 0; i < 2; i++) {
		pg.data[i].vclock_mode = CLOCKD_VCLOCK_NONE;
		pg.data[i].mask = UINT64_MAX;
		pg.data[i].max_cycles = UINT64_MAX;
		pg.data[i].real_sec = INT64_MAX / 1000;
		pg.data[i].mono_sec = INT64_MIN / 1000;
		pg.data[i].xtime_sec = INT64_MAX / 1000;
		pg.data[i].coarse_mono_sec = INT64_MIN / 1000;
	}
	write_file(path, &pg, sizeof(pg));
	return 0;
}

static void cleanup(void)
{
	static const char *const names[] = { "empty", "fifo", "random", "short", "long", "page" };
	char p[400];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, names[i]);
		unlink(p);
	}
	rmdir(dir);
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "extreme") == 0)
		return write_extreme(argv[2]);
	if (!mkdtemp(dir))
		tap_bail("mkdtemp: %s", strerror(errno));
	atexit(cleanup);
	tap_plan(7 + 2 * 6 + 2);
	forged_files();
	forged_vclock(CLOCKD_VCLOCK_HPET, "HPET");
	forged_vclock(CLOCKD_VCLOCK_PHC, "PHC");
	/* The control: a page whose counter needs no device is read (its
	 * writer is gone, so the read says ESTALE, not EPROTO). */
	write_page(in_dir(3, "page"), CLOCKD_VCLOCK_NONE, "");
	expect("control: a page with no device counter", path_buf[3], ESTALE);
	expect("control: no page at all", in_dir(2, "missing"), ENOENT);
	return tap_done();
}
