/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * For tests/stress/exhaust.sh: connect COUNT times to the control socket
 * PATH and hold every connection open until stdin reaches end of file.
 * Prints "connected N refused M errno E closed K" once all attempts are
 * made: N connects succeeded, M failed (E: the first failure's errno, 0 if
 * none), and K of the N were answered or closed by the daemon within
 * 300 ms (a client beyond its limits gets an ERROR and a close; one it
 * keeps hears nothing, as these say nothing).
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int count, connected = 0, refused = 0, first_err = 0, closed = 0;
	int *fds;
	char c;

	if (argc != 3) {
		fprintf(stderr, "usage: holdconn PATH COUNT\n");
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
	usleep(300000);
	for (int i = 0; i < connected; i++) {
		struct pollfd p = { .fd = fds[i], .events = POLLIN };

		closed += poll(&p, 1, 0) == 1;
	}
	printf("connected %d refused %d errno %d closed %d\n", connected, refused, first_err, closed);
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	return 0;
}
