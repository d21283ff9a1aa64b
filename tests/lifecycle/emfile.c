/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The daemon out of descriptors (issue #26 item 11). Its RLIMIT_NOFILE is
 * lowered (prlimit) twice: to its lowest free descriptor, so that it
 * cannot even accept a connection, and to its third free one, so that it
 * can accept
 * but not make the client's memfd and eventfds. Either way the client's
 * first timer_settime fails with EAGAIN (a resource the daemon lacks for
 * now), not EMFILE as if the client's own table were full, nor after the
 * library's 5 s wait for an answer: the daemon says why and hangs up.
 * Once the limit is back, clients arm.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <clockd/clockd.h>
#include "tests/libtimers/daemon.h"
#include "tests/tap.h"

/* The number of the (@k + 1)th descriptor @pid does not have open: as
 * its limit, that leaves it @k to open. -1 if it cannot be seen. */
static int free_slot(pid_t pid, int k)
{
	static unsigned char used[65536];
	char path[64];
	struct dirent *e;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	d = opendir(path);
	if (!d)
		return -1;
	memset(used, 0, sizeof(used));
	while ((e = readdir(d))) {
		int n = atoi(e->d_name);

		if (e->d_name[0] != '.' && n >= 0 && n < (int)sizeof(used))
			used[n] = 1;
	}
	closedir(d);
	for (int n = 0; n < (int)sizeof(used); n++)
		if (!used[n] && k-- == 0)
			return n;
	return -1;
}

/* The daemon's threads open descriptors of their own after it serves:
 * wait until that slot stays the same for half a second. */
static int settled_slot(pid_t pid, int k)
{
	int last = -2, same = 0;

	for (int i = 0; i < 100 && same < 5; i++) {
		int n = free_slot(pid, k);

		same = n == last ? same + 1 : 0;
		last = n;
		td_sleep(100000000);
	}
	return last;
}

/* Arm a fresh timer; 0 or the errno. */
static int arm_one(void)
{
	struct clockd_sigevent sev = { .notify = CLOCKD_SIGEV_NONE, .cpu = -1 };
	struct itimerspec v = { .it_value = { .tv_sec = 3600 } };
	clockd_timer_t id;
	int rc;

	if (clockd_timer_create(CLOCKD_MONOTONIC, &sev, &id) < 0)
		return errno;
	rc = clockd_timer_settime(id, 0, &v, NULL) < 0 ? errno : 0;
	clockd_timer_delete(id);
	return rc;
}

/* The daemon's log has @what. */
static bool logged(const char *what)
{
	char path[512], line[1024];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "%s/clockd.log", td_dir());
	f = fopen(path, "r");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, what) != NULL;
	fclose(f);
	return found;
}

static void set_limit(pid_t pid, rlim_t cur, const struct rlimit *old)
{
	struct rlimit low = { .rlim_cur = cur, .rlim_max = old->rlim_max }; /* the soft limit only */

	if (prlimit(pid, RLIMIT_NOFILE, &low, NULL) < 0)
		tap_bail("prlimit: %s", strerror(errno));
}

int main(void)
{
	struct clockd_status st;
	struct rlimit old;
	pid_t pid, child;
	int lim, err, wst;

	td_init();
	td_start(NULL);
	if (clockd_status(&st, sizeof(st)) < 0)
		tap_bail("clockd_status: %s", strerror(errno));
	pid = (pid_t)st.pid;
	lim = settled_slot(pid, 0);
	if (lim < 0 || prlimit(pid, RLIMIT_NOFILE, NULL, &old) < 0) {
		td_stop(SIGTERM);
		printf("1..0 # SKIP cannot see or set the daemon's descriptor limit: %s\n", strerror(errno));
		return 0; /* the plan says skip (the TAP driver) */
	}
	tap_plan(5);

	/* No room for the connection itself. */
	set_limit(pid, (rlim_t)lim, &old);
	err = arm_one();
	tap_ok(err == EAGAIN, "with descriptors 0-%d open and a limit of %d the client gets EAGAIN, not EMFILE "
	       "(%s)", lim - 1, lim, err ? strerror(err) : "served");
	tap_ok(logged("refusing clients with EAGAIN") || logged("the daemon is out of descriptors") ||
		       logged("cannot make a timer client"),
	       "... because the daemon refused it and said so, not after the library's wait");
	set_limit(pid, old.rlim_cur, &old);
	err = arm_one();
	tap_ok(err == 0, "with the limit back the same client arms (%s)", err ? strerror(err) : "0");

	/* Room for the connection, not for the client's shared memory: a
	 * child, whose first call makes a connection of its own. */
	lim = settled_slot(pid, 2);
	set_limit(pid, (rlim_t)lim, &old);
	fflush(stdout);
	child = fork();
	if (child < 0)
		tap_bail("fork: %s", strerror(errno));
	if (child == 0)
		_exit(arm_one());
	if (waitpid(child, &wst, 0) != child)
		tap_bail("waitpid: %s", strerror(errno));
	err = WIFEXITED(wst) ? WEXITSTATUS(wst) : -1;
	tap_ok(err == EAGAIN, "with a limit of %d, two descriptors free, a new client gets EAGAIN (%s)", lim,
	       err > 0 ? strerror(err) : err ? "child died" : "served");
	set_limit(pid, old.rlim_cur, &old);
	err = arm_one();
	tap_ok(err == 0, "with the limit back a client arms again (%s)", err ? strerror(err) : "0");
	td_stop(SIGTERM);
	return tap_done();
}
