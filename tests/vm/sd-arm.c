/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The systemd guest's timer check (tests/vm/sd-test.sh): arm one
 * kernel-flavoured clockd timer a few jiffies ahead through the control
 * socket, as the user running it, and wait for its callback.
 *
 *   sd-arm
 *
 * Prints one line: "fired" (exit 0), "arm: ERRNO-NAME: message" when the
 * daemon could not be asked (exit 1: e.g. EACCES for a user outside the
 * group clockd), or "timeout" when nothing came within 10 s (exit 2).
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <clockd/clockd.h>

static atomic_int fired;	/* set in the library's timer thread */

static void on_timer(struct clockd_timer *t, void *arg)
{
	(void)t;
	(void)arg;
	atomic_store(&fired, 1);
}

static const char *errno_name(int e)
{
	switch (e) {
	case EACCES: return "EACCES";
	case EPERM: return "EPERM";
	case ENOENT: return "ENOENT";
	case ECONNREFUSED: return "ECONNREFUSED";
	case ESTALE: return "ESTALE";
	default: return "errno";
	}
}

int main(void)
{
	struct clockd_timer t;
	struct timespec nap = { 0, 10 * 1000 * 1000 };
	int i;

	if (clockd_timer_setup(&t, on_timer, NULL) < 0 ||
	    clockd_add_timer(&t, clockd_get_jiffies_64() + 5) < 0) {
		int e = errno;

		printf("arm: %s: %s\n", errno_name(e), strerror(e));
		return 1;
	}
	for (i = 0; i < 1000 && !atomic_load(&fired); i++)
		nanosleep(&nap, NULL);
	if (!atomic_load(&fired)) {
		puts("timeout");
		return 2;
	}
	puts("fired");
	return 0;
}
