/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The floor for a process woken HZ times a second: a periodic timerfd and a
 * blocking read, nothing else. bench/run.sh measures it beside the daemon,
 * so the daemon's idle cost is reported as a ratio to what the kernel and
 * the machine charge for the wake-ups alone.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/timerfd.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long hz = argc > 1 ? strtol(argv[1], NULL, 10) : 1000;
	struct itimerspec its;
	uint64_t n;
	int fd;

	if (hz < 1 || hz > 100000) {
		fprintf(stderr, "usage: tick-floor [HZ]\n");
		return 2;
	}
	its.it_interval.tv_sec = 0;
	its.it_interval.tv_nsec = 1000000000 / hz;
	its.it_value = its.it_interval;
	fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	if (fd < 0 || timerfd_settime(fd, 0, &its, NULL) < 0) {
		perror("tick-floor: timerfd");
		return 1;
	}
	for (;;)
		if (read(fd, &n, sizeof(n)) < 0) {
			perror("tick-floor: read");
			return 1;
		}
}
