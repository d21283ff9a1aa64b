/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A private clockd for the timer tests (see daemon.h). */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <clockd/clockd.h>
#include "tests/libtimers/daemon.h"
#include "tests/tap.h"

#define START_TIMEOUT_NS 10000000000LL
#define MAX_OPTS 16

static char dir[256];
static pid_t daemon_pid;
static pid_t owner; /* only the process that made it cleans up */

int64_t td_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void td_sleep(int64_t ns)
{
	struct timespec ts = { .tv_sec = ns / 1000000000, .tv_nsec = ns % 1000000000 };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

bool td_wait_u64(const uint64_t *flag, uint64_t want, int64_t timeout_ns)
{
	int64_t end = td_now() + timeout_ns;

	while (__atomic_load_n(flag, __ATOMIC_ACQUIRE) < want) {
		if (td_now() > end)
			return false;
		td_sleep(1000000);
	}
	return true;
}

uint64_t td_cpus(void)
{
	cpu_set_t set;
	uint64_t mask = 0;

	if (sched_getaffinity(0, sizeof(set), &set) < 0)
		return 1;
	for (int i = 0; i < 64; i++)
		if (CPU_ISSET(i, &set))
			mask |= 1ull << i;
	return mask;
}

const char *td_dir(void)
{
	return dir;
}

static void cleanup(void)
{
	char cmd[300];

	if (getpid() != owner)
		return;
	td_stop(SIGKILL);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
}

void td_init(void)
{
	const char *tmp = getenv("TMPDIR");
	char path[300];

	snprintf(dir, sizeof(dir), "%s/clockd-timers.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir))
		tap_bail("mkdtemp: %s", strerror(errno));
	owner = getpid();
	atexit(cleanup);
	snprintf(path, sizeof(path), "%s/page", dir);
	setenv("CLOCKD_SHM", path, 1);
	snprintf(path, sizeof(path), "%s/ctl", dir);
	setenv("CLOCKD_SOCKET", path, 1);
}

static void exec_daemon(const char *const *opts)
{
	const char *top = getenv("top_builddir");
	char bin[512], page[300], sock[300], log[300];
	const char *argv[2 * MAX_OPTS + 8];
	int n = 0;

	snprintf(bin, sizeof(bin), "%s/src/clockd/clockd", top ? top : ".");
	snprintf(page, sizeof(page), "page=%s/page", dir);
	snprintf(sock, sizeof(sock), "control_socket=%s/ctl", dir);
	snprintf(log, sizeof(log), "%s/clockd.log", dir);
	argv[n++] = bin;
	argv[n++] = "-o";
	argv[n++] = page;
	argv[n++] = "-o";
	argv[n++] = sock;
	/* The tests keep both CPUs busy with callbacks (an ASan build all
	 * the more): a SCHED_OTHER tick thread may then wait past the stale
	 * limit, and clients' reads fail with ESTALE. As root, the defaults
	 * run the tick and timer threads SCHED_FIFO (clockd.conf(5)). */
	for (int i = 0; opts && opts[i] && i < MAX_OPTS; i++) {
		argv[n++] = "-o";
		argv[n++] = opts[i];
	}
	argv[n] = NULL;
	if (!freopen(log, "a", stderr))
		_exit(126);
	execv(bin, (char *const *)(uintptr_t)argv);
	_exit(127);
}

static void show_log(void)
{
	char path[300], line[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/clockd.log", dir);
	f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		printf("# clockd: %s", line);
	fclose(f);
}

/* Somebody accepts on the socket: not just a file left by a daemon that
 * was killed, which the new one replaces after its page is live. */
static bool socket_there(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	bool up;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", getenv("CLOCKD_SOCKET"));
	up = fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
	if (fd >= 0)
		close(fd);
	return up;
}

/* Fork and exec the daemon with @opts. */
static void fork_daemon(const char *const *opts)
{
	fflush(stdout);
	daemon_pid = fork();
	if (daemon_pid < 0)
		tap_bail("fork: %s", strerror(errno));
	if (daemon_pid == 0)
		exec_daemon(opts);
}

/* The daemon exited (reaped). */
static bool daemon_exited(void)
{
	if (waitpid(daemon_pid, NULL, WNOHANG) != daemon_pid)
		return false;
	daemon_pid = 0;
	return true;
}

void td_start(const char *const *opts)
{
	int64_t end = td_now() + START_TIMEOUT_NS;
	struct clockd_status st;
	bool live = false;

	fork_daemon(opts);
	while (td_now() < end && !daemon_exited()) {
		live = clockd_status(&st, sizeof(st)) == 0 && st.state == CLOCKD_STATE_LIVE;
		if (live && socket_there())
			return;
		td_sleep(10000000);
	}
	show_log();
	tap_bail(live ? "clockd serves its page but not its control socket" : "clockd did not come up");
}

void td_start_stopped(const char *const *opts)
{
	int64_t end = td_now() + START_TIMEOUT_NS;
	const char *sock = getenv("CLOCKD_SOCKET");
	struct stat st;

	fork_daemon(opts);
	while (td_now() < end && !daemon_exited()) {
		if (stat(sock, &st) == 0 && S_ISSOCK(st.st_mode)) {
			kill(daemon_pid, SIGSTOP);
			return;
		}
		td_sleep(100000);
	}
	show_log();
	tap_bail("clockd made no control socket");
}

void td_signal(int sig)
{
	if (daemon_pid > 0)
		kill(daemon_pid, sig);
}

int td_pid(void)
{
	return daemon_pid > 0 ? (int)daemon_pid : 0;
}

void td_stop(int sig)
{
	if (daemon_pid <= 0)
		return;
	kill(daemon_pid, sig);
	waitpid(daemon_pid, NULL, 0);
	daemon_pid = 0;
}

static void nothing(struct clockd_timer *t, void *arg)
{
	(void)t;
	(void)arg;
}

void td_absorb_reset(void)
{
	struct clockd_timer t;

	clockd_timer_setup(&t, nothing, NULL);
	if (clockd_add_timer(&t, clockd_get_jiffies_64() + 1000000) == 0)
		clockd_del_timer_sync(&t);
}
