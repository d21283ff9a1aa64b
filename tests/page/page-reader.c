/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A client of a running daemon's page, built natively and with -m32 from
 * the same sources (and the library's sources), for m32-reader.sh.
 *
 *   page-reader --wait   poll clockd_status() until LIVE (10 s deadline)
 *   page-reader          print the page fields that do not change while the
 *                        daemon runs, as seen through struct clockd_page and
 *                        through clockd_status(), and check every clockd clock
 *                        and jiffies_64 against the kernel; exit 1 if a check
 *                        fails (reasons on stderr)
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <clockd/clockd.h>
#include <clockd/page.h>
#include "shared/tickmath.h"

#define WAIT_DEADLINE_NS (INT64_C(10) * 1000000000)
/* How far a clockd clock may be from the kernel's: the daemon disciplines
 * nothing here, so only a wrong read is this far off. */
#define TOLERANCE_NS INT64_C(1000000000)

static int failures;

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "page-reader (%zu-bit): ", sizeof(void *) * 8);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	failures++;
}

static int wait_live(void)
{
	struct clockd_status st = { 0 };
	int64_t deadline = kclock_ns(CLOCK_MONOTONIC) + WAIT_DEADLINE_NS;
	struct timespec pause = { 0, 20000000 };

	do {
		if (clockd_status(&st, sizeof(st)) == 0 && st.state == CLOCKD_STATE_LIVE)
			return 0;
		nanosleep(&pause, NULL);
	} while (kclock_ns(CLOCK_MONOTONIC) < deadline);
	fprintf(stderr, "page-reader: %s not live after 10 s (state %u)\n", st.page_path, st.state);
	return 1;
}

static const struct clockd_page *map_page(void)
{
	const char *path = getenv("CLOCKD_SHM");
	int fd = path ? open(path, O_RDONLY | O_CLOEXEC) : -1;
	void *m;

	if (fd < 0)
		return NULL;
	m = mmap(NULL, CLOCKD_PAGE_SIZE, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	return m == MAP_FAILED ? NULL : m;
}

/* The header as struct clockd_page lays it out in this build. */
static void print_header(const struct clockd_page *pg)
{
	printf("page.magic %#" PRIx32 "\n", pg->magic);
	printf("page.abi_version %" PRIu32 "\n", pg->abi_version);
	printf("page.size %" PRIu32 "\n", pg->size);
	printf("page.hz %" PRIu32 "\n", pg->hz);
	printf("page.generation %" PRIu64 "\n", pg->generation);
	printf("page.tick_ns %" PRIu32 "\n", pg->tick_ns);
	printf("page.stale_ns %" PRIu64 "\n", pg->stale_ns);
	printf("page.start_mono_ns %" PRId64 "\n", pg->start_mono_ns);
	printf("page.jiffies_base %" PRIu64 "\n", pg->jiffies_base);
	printf("page.jiffies_epoch_ns %" PRId64 "\n", pg->jiffies_epoch_ns);
	printf("page.initial_jiffies %" PRIu64 "\n", pg->initial_jiffies);
	printf("page.source %.32s\n", pg->source);
	printf("page.tick %.32s\n", pg->tick);
	printf("page.pid %" PRIu32 "\n", pg->pid);
}

/* The same through the public struct clockd_status. */
static void print_status(void)
{
	struct clockd_status st;

	if (clockd_status(&st, sizeof(st)) != 0) {
		fail("clockd_status: %s", strerror(errno));
		return;
	}
	if (st.state != CLOCKD_STATE_LIVE)
		fail("clockd_status: state %u, want LIVE", st.state);
	printf("status.sizeof %zu\n", sizeof(st));
	printf("status.hz %" PRIu32 "\n", st.hz);
	printf("status.generation %" PRIu64 "\n", st.generation);
	printf("status.pid %" PRIu32 "\n", st.pid);
	printf("status.stale_ns %" PRIu64 "\n", st.stale_ns);
	printf("status.initial_jiffies %" PRIu64 "\n", st.initial_jiffies);
	printf("status.source %s\n", st.source);
	printf("status.tick %s\n", st.tick);
	printf("clockd_hz %u\n", clockd_hz());
}

static const struct {
	const char *name;
	clockid_t id, kernel;
} clocks[] = {
	{ "CLOCKD_MONOTONIC", CLOCKD_MONOTONIC, CLOCK_MONOTONIC },
	{ "CLOCKD_REALTIME", CLOCKD_REALTIME, CLOCK_REALTIME },
	{ "CLOCKD_MONOTONIC_RAW", CLOCKD_MONOTONIC_RAW, CLOCK_MONOTONIC_RAW },
	{ "CLOCKD_MONOTONIC_COARSE", CLOCKD_MONOTONIC_COARSE, CLOCK_MONOTONIC_COARSE },
	{ "CLOCKD_REALTIME_COARSE", CLOCKD_REALTIME_COARSE, CLOCK_REALTIME_COARSE },
};

static void check_clocks(void)
{
	struct timespec ts;
	int64_t diff;

	for (size_t i = 0; i < sizeof(clocks) / sizeof(clocks[0]); i++) {
		if (clockd_clock_gettime(clocks[i].id, &ts) != 0) {
			fail("%s: %s", clocks[i].name, strerror(errno));
			continue;
		}
		diff = ts_to_ns(&ts) - kclock_ns(clocks[i].kernel);
		if (diff > TOLERANCE_NS || diff < -TOLERANCE_NS)
			fail("%s: %lld ns from the kernel's clock", clocks[i].name, (long long)diff);
	}
}

/* jiffies_64 = jiffies_base + ticks since jiffies_epoch_ns, within 1 s. */
static void check_jiffies(const struct clockd_page *pg)
{
	uint64_t j, want;
	int64_t since = kclock_ns(CLOCK_MONOTONIC) - pg->jiffies_epoch_ns;

	if (pg->hz == 0) {
		fail("page.hz is 0");
		return;
	}
	errno = 0;
	j = clockd_get_jiffies_64();
	if (j == 0) {
		fail("clockd_get_jiffies_64: %s", strerror(errno));
		return;
	}
	want = pg->jiffies_base + (uint64_t)(since > 0 ? since : 0) / (NSEC_PER_SEC / pg->hz);
	if (j + pg->hz < want || j > want + pg->hz)
		fail("jiffies_64 %" PRIu64 ", want about %" PRIu64, j, want);
	if (j < pg->initial_jiffies)
		fail("jiffies_64 %" PRIu64 " below initial_jiffies %" PRIu64, j, pg->initial_jiffies);
	if (clockd_jiffies() - (uint32_t)j > pg->hz)
		fail("clockd_jiffies %" PRIu32 " is not the low word of jiffies_64 %" PRIu64,
		     clockd_jiffies(), j);
}

int main(int argc, char **argv)
{
	const struct clockd_page *pg;

	if (argc > 1 && strcmp(argv[1], "--wait") == 0)
		return wait_live();
	pg = map_page();
	if (!pg) {
		fprintf(stderr, "page-reader: cannot map $CLOCKD_SHM: %s\n", strerror(errno));
		return 1;
	}
	print_header(pg);
	print_status();
	check_clocks();
	check_jiffies(pg);
	return failures ? 1 : 0;
}
