/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer harness of the page reader (src/libclockd: page.c, clock.c,
 * status.c). Each input is written as the page file at $CLOCKD_SHM (so a
 * short input is a truncated page, and any byte may be wrong: magic, ABI,
 * an odd sequence count that never moves, a device table whose dev_seq
 * stays odd, a writer lock word saying the daemon lives); then every clock
 * is read, with the kernel fallback off and on, and clockd_status(),
 * clockd_devices(), clockd_tracking(), clockd_clock_getres() and the
 * jiffies calls run on it. They must return (libFuzzer's -timeout catches a
 * reader that waits forever on a dead writer), must not crash or trip the
 * sanitizers, and must keep their contracts:
 *  - a read that succeeds gives a normalised timespec (0 <= tv_nsec < 1e9);
 *  - a read that fails sets one of the documented page errors;
 *  - with the fallback on, every read succeeds;
 *  - clockd_status() returns 0 with a known state, clockd_devices() at most
 *    CLOCKD_PAGE_MAX_DEVICES entries.
 * Any breach aborts.
 *
 * Between inputs the harness unmaps the page (lib_page_forget(), page.c),
 * so that each is validated as a new daemon's file would be. The client's
 * own device counters (CLOCKD_VCLOCK_HPET, _PHC) are left out: they open the
 * device path the page names, which a fuzzer would turn into an open of
 * random paths, and the library keeps one state per device path it met (a
 * few in a process's life; millions here). Those two modes become
 * CLOCKD_VCLOCK_NONE before the file is written.
 *
 * Built and run by tests/fuzz/run.sh.
 */
#define CLOCKD_NO_INLINE /* it fuzzes the library's reads, and unmaps the page under them */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <clockd/clockd.h>
#include <clockd/page.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);
void lib_page_forget(void); /* src/libclockd/page.c */

static char page_path[64];
static uint8_t buf[CLOCKD_PAGE_SIZE * 2];

static const clockid_t clocks[] = {
	CLOCKD_REALTIME, CLOCKD_MONOTONIC, CLOCKD_MONOTONIC_RAW,
	CLOCKD_REALTIME_COARSE, CLOCKD_MONOTONIC_COARSE,
};

static void fail(const char *what, long v)
{
	fprintf(stderr, "page-fuzz: %s (%ld)\n", what, v);
	abort();
}

static void remove_page(void)
{
	unlink(page_path);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	/* Memory, not a disk: a file is written for every input. */
	snprintf(page_path, sizeof(page_path), "%s/page-fuzz.%d",
		 access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp", (int)getpid());
	setenv("CLOCKD_SHM", page_path, 1);
	unsetenv("CLOCKD_FALLBACK");
	atexit(remove_page);
	return 0;
}

static void write_page(const uint8_t *data, size_t size)
{
	static const size_t modes[] = {
		offsetof(struct clockd_page, data[0].vclock_mode),
		offsetof(struct clockd_page, data[1].vclock_mode),
	};
	int fd;

	if (size > sizeof(buf))
		size = sizeof(buf);
	memcpy(buf, data, size);
	for (size_t i = 0; i < 2; i++) {
		uint32_t m;

		if (modes[i] + sizeof(m) > size)
			continue;
		memcpy(&m, buf + modes[i], sizeof(m));
		if (m == CLOCKD_VCLOCK_HPET || m == CLOCKD_VCLOCK_PHC) {
			m = CLOCKD_VCLOCK_NONE;
			memcpy(buf + modes[i], &m, sizeof(m));
		}
	}
	fd = open(page_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, buf, size) != (ssize_t)size || close(fd) != 0)
		fail("cannot write the page file", errno);
}

static bool page_error(int e)
{
	return e == ESTALE || e == EPROTO || e == ENOENT || e == EACCES;
}

static void read_clocks(bool fallback)
{
	struct timespec ts;

	for (size_t i = 0; i < sizeof(clocks) / sizeof(clocks[0]); i++) {
		errno = 0;
		if (clockd_clock_gettime(clocks[i], &ts) == 0) {
			if (ts.tv_nsec < 0 || ts.tv_nsec >= 1000000000)
				fail("a read gave tv_nsec out of range", ts.tv_nsec);
		} else if (fallback) {
			fail("a read failed with the fallback on", errno);
		} else if (!page_error(errno)) {
			fail("a read failed with an undocumented errno", errno);
		}
		if (clockd_clock_getres(clocks[i], &ts) == 0 &&
		    (ts.tv_nsec < 0 || ts.tv_nsec >= 1000000000))
			fail("getres gave tv_nsec out of range", ts.tv_nsec);
	}
}

static void read_tables(void)
{
	struct clockd_device dev[CLOCKD_PAGE_MAX_DEVICES + 2];
	struct clockd_tracking t;
	struct clockd_status st;
	int n;

	if (clockd_status(&st, sizeof(st)) != 0)
		fail("clockd_status failed", errno);
	if (st.state > CLOCKD_STATE_GONE)
		fail("clockd_status: unknown state", st.state);
	if (!memchr(st.source, '\0', sizeof(st.source)) || !memchr(st.tick, '\0', sizeof(st.tick)))
		fail("clockd_status: a name without its NUL", 0);
	n = clockd_devices(dev, CLOCKD_PAGE_MAX_DEVICES + 2);
	if (n > CLOCKD_PAGE_MAX_DEVICES)
		fail("clockd_devices: more devices than the table holds", n);
	for (int i = 0; i < n; i++)
		if (!memchr(dev[i].name, '\0', sizeof(dev[i].name)) ||
		    !memchr(dev[i].device, '\0', sizeof(dev[i].device)))
			fail("clockd_devices: a name without its NUL", i);
	if (clockd_tracking(&t, sizeof(t)) == 0 &&
	    (!memchr(t.reference, '\0', sizeof(t.reference)) || !memchr(t.device, '\0', sizeof(t.device))))
		fail("clockd_tracking: a name without its NUL", 0);
	(void)clockd_get_jiffies_64();
	(void)clockd_hz();
	(void)clockd_msecs_to_jiffies(1000);
	(void)clockd_jiffies_to_nsecs(12345);
	(void)clockd_current_kernel_time();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	lib_page_forget();
	write_page(data, size);
	clockd_set_fallback(0);
	read_clocks(false);
	read_tables();
	clockd_set_fallback(1);
	read_clocks(true);
	clockd_set_fallback(0);
	return 0;
}
