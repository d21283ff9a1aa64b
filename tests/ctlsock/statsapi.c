/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libclockd's 0.4 calls against the daemon of tests/ctlsock/ctlsock.sh
 * ($CLOCKD_SOCKET), while a client (pid argv[1]) has argv[2] timers armed:
 * clockd_timer_cpu_stats() and clockd_timer_client_stats() (the counts,
 * the struct-size rule, the errors) and the clockd_*_name() tables.
 *
 *   statsapi PID PENDING
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <clockd/clockd.h>
#include <clockd/page.h>

#include "tests/tap.h"

#define MAXN 256

static void names(void)
{
	tap_ok(strcmp(clockd_state_name(CLOCKD_STATE_LIVE), "live") == 0 &&
		       strcmp(clockd_state_name(CLOCKD_STATE_STALE), "stale") == 0 &&
		       strcmp(clockd_state_name(CLOCKD_STATE_GONE), "gone") == 0 &&
		       strcmp(clockd_state_name(CLOCKD_STATE_ABSENT), "absent") == 0,
	       "clockd_state_name: absent, live, stale, gone");
	tap_ok(strcmp(clockd_device_role_name(CLOCKD_DEV_REFERENCE), "ref") == 0 &&
		       strcmp(clockd_device_state_name(CLOCKD_DEV_ACTIVE), "active") == 0 &&
		       strcmp(clockd_fault_name(CLOCKD_FAULT_NONE), "none") == 0 &&
		       strcmp(clockd_fault_name(CLOCKD_FAULT_STALLED), "stalled") == 0 &&
		       strcmp(clockd_disc_state_name(CLOCKD_DISC_HOLDOVER), "holdover") == 0,
	       "the device, fault and discipline names");
	tap_ok(strcmp(clockd_state_name(99), "unknown") == 0 && strcmp(clockd_device_role_name(99), "unknown") == 0 &&
		       strcmp(clockd_device_state_name(UINT32_MAX), "unknown") == 0 &&
		       strcmp(clockd_fault_name(99), "unknown") == 0 && strcmp(clockd_disc_state_name(99), "unknown") == 0,
	       "an unknown value is \"unknown\", never NULL");
}

static void cpus(uint64_t want_pending)
{
	static struct clockd_timer_cpu_stats st[MAXN];
	uint64_t pending = 0;
	int n0, n;

	n0 = clockd_timer_cpu_stats(NULL, sizeof(st[0]), 0);
	n = clockd_timer_cpu_stats(st, sizeof(st[0]), MAXN);
	tap_ok(n0 > 0 && n == n0, "clockd_timer_cpu_stats: %d timer bases, with max 0 as with an array (%d)", n, n0);
	for (int i = 0; i < n && i < MAXN; i++)
		pending += st[i].pending_jiffies + st[i].pending_ns;
	tap_ok(pending == want_pending, "the bases hold the %llu pending timers (%llu)",
	       (unsigned long long)want_pending, (unsigned long long)pending);
	if (n > 1)
		tap_ok(clockd_timer_cpu_stats(st, sizeof(st[0]), 1) == n, "max 1: still the count of all %d", n);
	else
		tap_skip("one CPU: max below the count needs two");
}

/* An element larger than ours: our fields, then zeros. */
static void larger(void)
{
	struct big {
		struct clockd_timer_client_stats s;
		unsigned char tail[24];
	} b[MAXN];
	bool zero = true;
	int n;

	memset(b, 0xff, sizeof(b));
	n = clockd_timer_client_stats(&b[0].s, sizeof(b[0]), MAXN);
	for (int i = 0; i < n && i < MAXN; i++)
		for (size_t k = 0; k < sizeof(b[i].tail); k++)
			zero = zero && b[i].tail[k] == 0;
	tap_ok(n > 0 && zero && b[0].s.pid != 0xffffffffu, "a larger element gets our fields and zeros after them");
}

static void clients(long pid, uint64_t want_pending)
{
	static struct clockd_timer_client_stats st[MAXN];
	bool found = false;
	int n;

	n = clockd_timer_client_stats(st, CLOCKD_TIMER_CLIENT_STATS_SIZE_V1, MAXN);
	for (int i = 0; i < n && i < MAXN; i++)
		if (st[i].pid == (uint32_t)pid && st[i].uid == (uint32_t)getuid() && st[i].pending == want_pending)
			found = true;
	tap_ok(found, "clockd_timer_client_stats: pid %ld, uid %u, %llu pending among %d clients", pid,
	       (unsigned)getuid(), (unsigned long long)want_pending, n);
}

static void errors(void)
{
	struct clockd_timer_cpu_stats st;
	int n;

	errno = 0;
	n = clockd_timer_cpu_stats(&st, CLOCKD_TIMER_CPU_STATS_SIZE_V1 - 1, 1);
	tap_ok(n == -1 && errno == EINVAL, "a size below the first version's: EINVAL");
	errno = 0;
	n = clockd_timer_cpu_stats(&st, sizeof(st), -1);
	tap_ok(n == -1 && errno == EINVAL, "a negative max: EINVAL");
	errno = 0;
	n = clockd_timer_client_stats(NULL, sizeof(struct clockd_timer_client_stats), 1);
	tap_ok(n == -1 && errno == EFAULT, "NULL with max 1: EFAULT");
	setenv("CLOCKD_SOCKET", "/nonexistent/clockd-test/control", 1);
	errno = 0;
	n = clockd_timer_cpu_stats(&st, sizeof(st), 1);
	tap_ok(n == -1 && errno == ENOENT, "no socket at $CLOCKD_SOCKET: ENOENT (%s)", strerror(errno));
}

int main(int argc, char **argv)
{
	if (argc != 3)
		tap_bail("usage: statsapi PID PENDING");
	tap_plan(12);
	names();
	cpus(strtoull(argv[2], NULL, 10));
	clients(strtol(argv[1], NULL, 10), strtoull(argv[2], NULL, 10));
	larger();
	errors();
	return tap_done();
}
