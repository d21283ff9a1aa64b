/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * For tests/stress/exhaust.sh and peruser.sh: connect COUNT times to the
 * control socket PATH and hold every connection open until stdin reaches
 * end of file. Prints "connected N refused M errno E closed K" once all
 * attempts are made: N connects succeeded, M failed (E: the first
 * failure's errno, 0 if none), and K of the N were answered or closed by
 * the daemon (a client beyond its limits gets an ERROR and a close; one it
 * keeps hears nothing, as these say nothing).
 *
 *   holdconn PATH COUNT [HELD]
 *
 * K is counted 300 ms after the last attempt; with HELD, once at most HELD
 * of the N are still open (or 10 s have passed), and again 300 ms later,
 * so that a closing beyond HELD shows too. A connect succeeds when the
 * connection is queued on the daemon's listening socket, before it takes
 * it: a daemon slow to take its queue (a loaded machine, or one out of
 * descriptors, which pauses accepting for up to a second) answers later
 * than 300 ms.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "tests/util.h"

#define HOLD_WAIT_NS 10000000000LL

static int count_closed(const int *fds, int n)
{
	int closed = 0;

	for (int i = 0; i < n; i++) {
		struct pollfd p = { .fd = fds[i], .events = POLLIN };

		closed += poll(&p, 1, 0) == 1;
	}
	return closed;
}

int main(int argc, char **argv)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int count, connected = 0, refused = 0, first_err = 0, closed, held = -1;
	int64_t until;
	int *fds;
	char c;

	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: holdconn PATH COUNT [HELD]\n");
		return 2;
	}
	if (argc == 4 && (held = atoi(argv[3])) < 0) {
		fprintf(stderr, "holdconn: HELD must be 0 or more\n");
		return 2;
	}
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", argv[1]);
	count = atoi(argv[2]);
	if (count < 1 || !(fds = calloc((size_t)count, sizeof(*fds)))) {
		fprintf(stderr, "holdconn: COUNT must be a positive number\n");
		return 2;
	}
	for (int i = 0; i < count; i++) {
		int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

		if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
			if (!first_err)
				first_err = errno;
			refused++;
			if (fd >= 0)
				close(fd);
			continue;
		}
		fds[connected++] = fd;
	}
	until = tu_mono_ns() + HOLD_WAIT_NS;
	usleep(300000);
	closed = count_closed(fds, connected);
	if (held >= 0) {
		while (connected - closed > held && tu_mono_ns() < until) {
			usleep(100000);
			closed = count_closed(fds, connected);
		}
		usleep(300000);
		closed = count_closed(fds, connected);
	}
	printf("connected %d refused %d errno %d closed %d\n", connected, refused, first_err, closed);
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	return 0;
}
