/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A restart never moves CLOCKD_MONOTONIC back, whatever rate the page
 * ran at (issue #26 item 11: with a 5 % discipline rate, a 9 s stall,
 * kill -9 and a restart moved it back 428 ms). The daemon is stopped
 * (SIGSTOP); its page is given a rate 5 % above the counter's (mult, in
 * both latch copies: what a disciplined page at discipline_max_ppm
 * 50000 publishes); a reader extrapolates through 8 s of the stall and
 * reads M; the daemon is killed and started again on the page: its
 * first CLOCKD_MONOTONIC is after M.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <clockd/clockd.h>
#include <clockd/page.h>
#include "tests/libtimers/daemon.h"
#include "tests/tap.h"

#define NS 1000000000LL

static int64_t mono(int *err)
{
	struct timespec ts;

	if (clockd_clock_gettime(CLOCKD_MONOTONIC, &ts) < 0) {
		*err = errno;
		return 0;
	}
	return (int64_t)ts.tv_sec * NS + ts.tv_nsec;
}

int main(void)
{
	static const char *const opts[] = { "discipline_max_ppm=50000", NULL };
	struct clockd_status st;
	struct clockd_page *pg;
	char path[300];
	int64_t before, after;
	int fd, err = 0;

	td_init();
	td_start(opts);
	tap_plan(3);
	if (clockd_status(&st, sizeof(st)) < 0)
		tap_bail("clockd_status: %s", strerror(errno));
	snprintf(path, sizeof(path), "%s/page", td_dir());
	fd = open(path, O_RDWR | O_CLOEXEC);
	pg = fd < 0 ? MAP_FAILED : mmap(NULL, CLOCKD_PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (pg == MAP_FAILED)
		tap_bail("%s: %s", path, strerror(errno));
	if (pg->data[0].vclock_mode == CLOCKD_VCLOCK_NONE) {
		td_stop(SIGTERM);
		printf("1..0 # SKIP the counter cannot be read here: reads do not extrapolate\n");
		return 0; /* the plan says skip (the TAP driver) */
	}
	kill((pid_t)st.pid, SIGSTOP);
	td_sleep(NS / 10); /* an update under way ends before the stop */
	for (int i = 0; i < 2; i++)
		__atomic_store_n(&pg->data[i].mult,
				 (uint32_t)((uint64_t)pg->data[i].raw_mult * 105 / 100), __ATOMIC_RELAXED);
	td_sleep(8 * NS);
	before = mono(&err);
	tap_ok(err == 0, "8 s into the stall a reader extrapolates at the page's rate (%.3f s; %s)",
	       (double)before / 1e9, err ? strerror(err) : "ok");
	kill((pid_t)st.pid, SIGKILL);
	td_stop(SIGCONT);
	td_start(opts);
	after = mono(&err);
	tap_ok(err == 0, "the restarted daemon serves the page");
	tap_ok(after >= before, "CLOCKD_MONOTONIC after the restart %.6f s is not before %.6f s (%+.1f ms)",
	       (double)after / 1e9, (double)before / 1e9, (double)(after - before) / 1e6);
	munmap(pg, CLOCKD_PAGE_SIZE);
	close(fd);
	td_stop(SIGTERM);
	return tap_done();
}
