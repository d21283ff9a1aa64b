/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * CPU hotplug (issue #26 item 9), as root where CPU 1 can go offline:
 * a periodic 5 ms timer on CPU 1 (CLOCKD_SIGEV_THREAD_CPU) runs while
 * CPU 1 goes offline for a second and comes back. Afterwards the daemon's
 * base thread for CPU 1 ("clockd-tb/1") is pinned to CPU 1 alone again,
 * and for two seconds every callback runs on CPU 1 (sched_getcpu), in
 * the library's delivery thread pinned to CPU 1 alone again. While
 * CPU 1 is away its callbacks wait, and clockctl timers says so; none runs
 * elsewhere after it is back.
 * The CPU is always put back online (also on a failed check).
 *
 * Taking a CPU offline moves every pinned thread of the machine, so that
 * tests running beside this one (make check -j2: tests/libtimers/pinned,
 * ...) would fail for this test's second: it runs only when asked for,
 * CLOCKD_TEST_HOTPLUG=1 (make check TESTS=tests/lifecycle/hotplug
 * CLOCKD_TEST_HOTPLUG=1), and says so when it skips. CI runs it in a qemu
 * guest of 2 CPUs of its own: CLOCKD_VM_CHECKS=hotplug make check-hw
 * (tests/vm/init.sh).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <clockd/clockd.h>
#include "tests/libtimers/daemon.h"
#include "tests/tap.h"

#define NS 1000000000LL
#define ONLINE "/sys/devices/system/cpu/cpu1/online"

static uint64_t calls, elsewhere, wide;
static int counting;

static void on_fire(union sigval v)
{
	(void)v;
	if (!__atomic_load_n(&counting, __ATOMIC_ACQUIRE))
		return;
	cpu_set_t set;

	__atomic_fetch_add(&calls, 1, __ATOMIC_RELAXED);
	if (sched_getcpu() != 1)
		__atomic_fetch_add(&elsewhere, 1, __ATOMIC_RELAXED);
	/* The library's delivery thread: pinned to CPU 1 alone again. */
	if (sched_getaffinity(0, sizeof(set), &set) == 0 && (CPU_COUNT(&set) != 1 || !CPU_ISSET(1, &set)))
		__atomic_fetch_add(&wide, 1, __ATOMIC_RELAXED);
}

static int set_online(int on)
{
	int fd = open(ONLINE, O_WRONLY | O_CLOEXEC);
	int ok;

	if (fd < 0)
		return -1;
	ok = write(fd, on ? "1" : "0", 1) == 1;
	close(fd);
	return ok ? 0 : -1;
}

static void put_back(void)
{
	set_online(1);
}

static void on_signal(int sig)
{
	set_online(1);
	signal(sig, SIG_DFL);
	raise(sig);
}

/* Cpus_allowed_list of the daemon's thread named @name, in @out. */
static int thread_cpus(pid_t pid, const char *name, char *out, size_t len)
{
	char path[384], buf[256];
	struct dirent *e;
	DIR *d;
	int found = -1;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return -1;
	while (found < 0 && (e = readdir(d))) {
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/task/%s/comm", (int)pid, e->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		if (fgets(buf, sizeof(buf), f) && strncmp(buf, name, strlen(name)) == 0 && buf[strlen(name)] == '\n') {
			fclose(f);
			snprintf(path, sizeof(path), "/proc/%d/task/%s/status", (int)pid, e->d_name);
			f = fopen(path, "re");
			while (f && fgets(buf, sizeof(buf), f))
				if (sscanf(buf, "Cpus_allowed_list: %63s", out) == 1 && len >= 64)
					found = 0;
		}
		if (f)
			fclose(f);
	}
	closedir(d);
	return found;
}

/* clockctl timers marks CPU 1 offline (its row ends so). */
static bool timers_say_offline(void)
{
	const char *top = getenv("top_builddir");
	char cmd[600], line[512];
	bool found = false;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "%s/src/clockctl/clockctl timers 2>&1", top ? top : ".");
	p = popen(cmd, "r");
	if (!p)
		return false;
	while (fgets(line, sizeof(line), p)) {
		printf("# %s", line);
		found = found || (strncmp(line, "1 ", 2) == 0 && strstr(line, "CPU offline: its timers wait"));
	}
	pclose(p);
	return found;
}

int main(void)
{
	struct clockd_sigevent sev = { .notify = CLOCKD_SIGEV_THREAD_CPU, .cpu = 1, .fn = on_fire };
	struct itimerspec per = { .it_value = { .tv_nsec = 5000000 }, .it_interval = { .tv_nsec = 5000000 } };
	struct clockd_status st;
	char cpus[64] = "?";
	clockd_timer_t id;
	bool offline_shown;
	uint64_t c0;

	if (!getenv("CLOCKD_TEST_HOTPLUG") || strcmp(getenv("CLOCKD_TEST_HOTPLUG"), "1") != 0) {
		printf("1..0 # SKIP takes CPU 1 offline, which breaks the tests running beside it: "
		       "run alone with CLOCKD_TEST_HOTPLUG=1, or in a guest: "
		       "CLOCKD_VM_CHECKS=hotplug make check-hw\n");
		return 0; /* the plan says skip (the TAP driver) */
	}
	if (geteuid() != 0) {
		printf("1..0 # SKIP needs root to take CPU 1 offline\n");
		return 0; /* the plan says skip (the TAP driver) */
	}
	if (!(td_cpus() & 2) || access(ONLINE, W_OK) != 0) {
		printf("1..0 # SKIP CPU 1 cannot be taken offline here (%s not writable, or not ours)\n", ONLINE);
		return 0; /* the plan says skip (the TAP driver) */
	}
	td_init();
	td_start(NULL);
	if (clockd_status(&st, sizeof(st)) < 0)
		tap_bail("clockd_status: %s", strerror(errno));
	if (clockd_timer_create(CLOCKD_MONOTONIC, &sev, &id) < 0 || clockd_timer_settime(id, 0, &per, NULL) < 0) {
		td_stop(SIGTERM);
		printf("1..0 # SKIP the daemon runs no timers on CPU 1 here: %s\n", strerror(errno));
		return 0; /* the plan says skip (the TAP driver) */
	}
	td_sleep(NS / 5);
	atexit(put_back);
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	if (set_online(0) < 0) {
		td_stop(SIGTERM);
		printf("1..0 # SKIP CPU 1 cannot be taken offline here: %s\n", strerror(errno));
		return 0; /* the plan says skip (the TAP driver) */
	}
	tap_plan(6);
	td_sleep(NS / 2);
	offline_shown = timers_say_offline();
	td_sleep(NS / 2);
	tap_ok(set_online(1) == 0, "CPU 1 offline for 1 s, then online again");
	tap_ok(offline_shown, "meanwhile clockctl timers marked CPU 1 \"CPU offline: its timers wait\"");
	/* Let both sides notice and pin again (they retry every 100 ms). */
	td_sleep(NS);
	__atomic_store_n(&counting, 1, __ATOMIC_RELEASE);
	c0 = __atomic_load_n(&calls, __ATOMIC_RELAXED);
	td_sleep(2 * NS);
	tap_ok(thread_cpus((pid_t)st.pid, "clockd-tb/1", cpus, sizeof(cpus)) == 0 && strcmp(cpus, "1") == 0,
	       "the daemon's base thread for CPU 1 is pinned to CPU 1 again (Cpus_allowed_list %s)", cpus);
	tap_ok(__atomic_load_n(&calls, __ATOMIC_RELAXED) - c0 >= 40, "the timer keeps firing (%llu callbacks in 2 s)",
	       (unsigned long long)(__atomic_load_n(&calls, __ATOMIC_RELAXED) - c0));
	tap_ok(__atomic_load_n(&elsewhere, __ATOMIC_RELAXED) == 0,
	       "every callback for CPU 1 ran on CPU 1 (%llu elsewhere of %llu)",
	       (unsigned long long)__atomic_load_n(&elsewhere, __ATOMIC_RELAXED),
	       (unsigned long long)__atomic_load_n(&calls, __ATOMIC_RELAXED));
	tap_ok(__atomic_load_n(&wide, __ATOMIC_RELAXED) == 0,
	       "the library's delivery thread for CPU 1 is pinned to CPU 1 again (%llu callbacks with a wider "
	       "affinity)", (unsigned long long)__atomic_load_n(&wide, __ATOMIC_RELAXED));
	clockd_timer_delete(id);
	td_stop(SIGTERM);
	return tap_done();
}
