/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Many timers and many clients:
 *  - 1e6 pending timers armed, then cancelled (client_max_timers=1100000,
 *    max_timers_per_user=0),
 *    none of them running;
 *  - a client killed with 1000 timers pending leaves none behind
 *    (`clockctl timers --json` shows 0 pending, within a deadline);
 *  - the quota (client_max_timers=10): the 11th pending timer gives
 *    EAGAIN, and another client is unaffected (its 10 timers run).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <clockd/clockd.h>
#include "tests/libtimers/daemon.h"
#include "tests/tap.h"

#define MILLION 1000000
#define WAIT_NS 10000000000LL

static uint64_t fired;

static void count(struct clockd_timer *t, void *arg)
{
	(void)t;
	(void)arg;
	__atomic_fetch_add(&fired, 1, __ATOMIC_RELEASE);
}

static void test_million(void)
{
	static const char *const opts[] = { "client_max_timers=1100000", "max_timers_per_user=0", NULL };
	struct clockd_timer *t = calloc(MILLION, sizeof(*t));
	uint64_t far = clockd_get_jiffies_64() + 1000000;
	int64_t t0;
	int i, armed = 0, cancelled = 0, pending = 0;

	td_start(opts);
	far = clockd_get_jiffies_64() + 1000000;
	t0 = td_now();
	for (i = 0; t && i < MILLION; i++) {
		clockd_timer_setup(&t[i], count, NULL);
		armed += clockd_add_timer(&t[i], far) == 0;
	}
	tap_ok(armed == MILLION, "%d of %d timers armed (%.2f s)", armed, MILLION, (td_now() - t0) / 1e9);
	for (i = 0; t && i < MILLION; i++)
		pending += clockd_timer_pending(&t[i]);
	tap_ok(pending == MILLION, "%d pending", pending);
	t0 = td_now();
	for (i = 0; t && i < MILLION; i++)
		cancelled += clockd_del_timer(&t[i]) == 1;
	tap_ok(cancelled == MILLION, "%d cancelled (%.2f s)", cancelled, (td_now() - t0) / 1e9);
	td_sleep(100000000);
	tap_ok(fired == 0, "none ran (%llu)", (unsigned long long)fired);
	free(t);
	td_stop(SIGTERM);
}

/* The sum of every "pending...": N in `clockctl timers --json`, -1 if it
 * could not be run. */
static long pending_in_daemon(void)
{
	const char *top = getenv("top_builddir");
	char cmd[600], buf[4096];
	size_t len;
	long sum = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "'%s/src/clockctl/clockctl' timers --json 2>/dev/null", top ? top : ".");
	p = popen(cmd, "r");
	if (!p)
		return -1;
	len = fread(buf, 1, sizeof(buf) - 1, p);
	buf[len] = 0;
	if (pclose(p) != 0)
		return -1;
	for (char *s = buf; (s = strstr(s, "\"pending")) != NULL;) {
		s = strchr(s, ':');
		if (!s)
			break;
		sum += strtol(s + 1, &s, 10);
	}
	return sum;
}

static void arm_and_wait(int fd, int n)
{
	struct clockd_timer *t = calloc((size_t)n, sizeof(*t));
	char ok = 1;

	for (int i = 0; i < n; i++) {
		clockd_timer_setup(&t[i], count, NULL);
		if (clockd_add_timer(&t[i], clockd_get_jiffies_64() + 1000000) < 0)
			ok = 0;
	}
	if (write(fd, &ok, 1) != 1)
		_exit(1);
	for (;;)
		pause();
}

static void test_killed(void)
{
	int64_t end;
	long before, after = -1;
	int fds[2];
	pid_t child;
	char ok = 0;

	td_start(NULL);
	if (pipe(fds) < 0)
		tap_bail("pipe: %s", strerror(errno));
	fflush(stdout);
	child = fork();
	if (child == 0)
		arm_and_wait(fds[1], 1000);
	if (read(fds[0], &ok, 1) != 1)
		ok = 0;
	before = pending_in_daemon();
	tap_ok(ok && before >= 1000, "a child armed 1000 timers; clockctl timers --json: pending fields sum to %ld", before);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	end = td_now() + WAIT_NS;
	while (td_now() < end && (after = pending_in_daemon()) != 0)
		td_sleep(10000000);
	tap_ok(after == 0, "killed: %ld pending left", after);
	close(fds[0]);
	close(fds[1]);
	td_stop(SIGTERM);
}

static void test_quota(void)
{
	static const char *const opts[] = { "client_max_timers=10", NULL };
	struct clockd_timer t[11];
	int armed = 0, r, err, status = -1;
	pid_t child;

	td_start(opts);
	td_absorb_reset();
	for (int i = 0; i < 10; i++) {
		clockd_timer_setup(&t[i], count, NULL);
		armed += clockd_add_timer(&t[i], clockd_get_jiffies_64() + 1000000) == 0;
	}
	clockd_timer_setup(&t[10], count, NULL);
	r = clockd_add_timer(&t[10], clockd_get_jiffies_64() + 1000000);
	err = errno;
	tap_ok(armed == 10 && r == -1 && err == EAGAIN, "quota 10: 10 armed, the 11th: %d (%s)", r,
	       strerror(err));
	fflush(stdout);
	child = fork();
	if (child == 0) {
		/* Another client: its own quota, its timers run. */
		struct clockd_timer u[10];

		fired = 0;
		for (int i = 0; i < 10; i++) {
			clockd_timer_setup(&u[i], count, NULL);
			if (clockd_add_timer(&u[i], clockd_get_jiffies_64() + 1) < 0) {
				printf("# the child's clockd_add_timer %d: %s\n", i, strerror(errno));
				fflush(stdout);
				_exit(2);
			}
		}
		_exit(td_wait_u64(&fired, 10, WAIT_NS) ? 0 : 3);
	}
	waitpid(child, &status, 0);
	tap_ok(WIFEXITED(status) && WEXITSTATUS(status) == 0, "another client armed 10 that ran (status %d)",
	       WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	tap_ok(clockd_del_timer(&t[0]) == 1 && clockd_add_timer(&t[10], clockd_get_jiffies_64() + 1) == 0,
	       "after one is deleted, the 11th arms");
	for (int i = 0; i < 11; i++)
		clockd_del_timer_sync(&t[i]);
	td_stop(SIGTERM);
}

int main(void)
{
	td_init();
	td_start(NULL);
	td_stop(SIGTERM);
	tap_plan(9);
	test_million();
	test_killed();
	test_quota();
	return tap_done();
}
