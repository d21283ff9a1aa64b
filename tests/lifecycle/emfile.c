/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The daemon out of descriptors (issue #26 item 11): its RLIMIT_NOFILE is
 * lowered (prlimit) to what it has open plus 3, so that it can accept a
 * connection but not make the client's memfd and eventfds. A client's
 * first timer_settime then fails with EAGAIN (a resource the daemon
 * lacks for now), not EMFILE as if the client's own table were full;
 * once the limit is back, the same client arms.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <clockd/clockd.h>
#include "tests/libtimers/daemon.h"
#include "tests/tap.h"

static int open_fds(pid_t pid)
{
	char path[64];
	struct dirent *e;
	DIR *d;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	d = opendir(path);
	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

int main(void)
{
	struct clockd_sigevent sev = { .notify = CLOCKD_SIGEV_NONE, .cpu = -1 };
	struct itimerspec v = { .it_value = { .tv_sec = 3600 } };
	struct clockd_status st;
	struct rlimit old, low;
	clockd_timer_t id;
	int n, rc, err;

	td_init();
	td_start(NULL);
	if (clockd_status(&st, sizeof(st)) < 0)
		tap_bail("clockd_status: %s", strerror(errno));
	n = open_fds((pid_t)st.pid);
	if (n < 0 || prlimit((pid_t)st.pid, RLIMIT_NOFILE, NULL, &old) < 0) {
		td_stop(SIGTERM);
		printf("1..0 # SKIP cannot see or set the daemon's descriptor limit: %s\n", strerror(errno));
		return 0; /* the plan says skip (the TAP driver) */
	}
	tap_plan(3);
	/* Its descriptors are numbered from 0: the highest is about n - 1. */
	low.rlim_cur = (rlim_t)n + 3;
	low.rlim_max = old.rlim_max; /* the soft limit only: it can go back */
	if (prlimit((pid_t)st.pid, RLIMIT_NOFILE, &low, NULL) < 0)
		tap_bail("prlimit: %s", strerror(errno));
	if (clockd_timer_create(CLOCKD_MONOTONIC, &sev, &id) < 0)
		tap_bail("clockd_timer_create: %s", strerror(errno));
	rc = clockd_timer_settime(id, 0, &v, NULL);
	err = errno;
	tap_ok(rc < 0, "with %d descriptors open and a limit of %d the daemon cannot serve a client", n, n + 3);
	tap_ok(rc < 0 && err == EAGAIN, "the client gets EAGAIN, not EMFILE (%s)", rc < 0 ? strerror(err) : "served");
	if (prlimit((pid_t)st.pid, RLIMIT_NOFILE, &old, NULL) < 0)
		tap_bail("prlimit: %s", strerror(errno));
	rc = clockd_timer_settime(id, 0, &v, NULL);
	tap_ok(rc == 0, "with the limit back the same client arms (%s)", rc ? strerror(errno) : "0");
	clockd_timer_delete(id);
	td_stop(SIGTERM);
	return tap_done();
}
