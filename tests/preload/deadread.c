/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * clockd_clock_gettime() is async-signal-safe as clock_gettime() is (issue
 * 26, item 1): with the page's daemon dead, every read fails and looks for
 * a new page under the library's page lock; a SIGALRM handler reading
 * CLOCKD_MONOTONIC every 50 us while main reads it in a loop must not
 * wait on that lock held by the code it interrupted. Prints the reads
 * made by each, for 2 s of the kernel's CLOCK_MONOTONIC (a deadlock never
 * returns: tests/preload/posix.sh runs this under a timeout).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <sys/time.h>
#include <time.h>

#include <clockd/clockd.h>

static volatile sig_atomic_t in_handler;

static void on_alarm(int sig)
{
	struct timespec ts;
	int err = errno;

	(void)sig;
	(clockd_clock_gettime)(CLOCKD_MONOTONIC, &ts);
	in_handler++;
	errno = err;
}

int main(void)
{
	struct sigaction sa = { .sa_handler = on_alarm, .sa_flags = SA_RESTART };
	struct itimerval it = { .it_value = { 0, 50 }, .it_interval = { 0, 50 } };
	struct timespec ts, k;
	long long end;
	long reads = 0, failed = 0;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	clock_gettime(CLOCK_MONOTONIC, &k);
	end = k.tv_sec * 1000000000LL + k.tv_nsec + 2000000000LL;
	do {
		if ((clockd_clock_gettime)(CLOCKD_MONOTONIC, &ts) != 0)
			failed++;
		reads++;
		clock_gettime(CLOCK_MONOTONIC, &k);
	} while (k.tv_sec * 1000000000LL + k.tv_nsec < end);
	it = (struct itimerval){ { 0, 0 }, { 0, 0 } };
	setitimer(ITIMER_REAL, &it, NULL);
	printf("reads %ld failed %ld handler %d\n", reads, failed, (int)in_handler);
	return 0;
}
