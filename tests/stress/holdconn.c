/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * For tests/stress/exhaust.sh: connect COUNT times to the control socket
 * PATH and hold every connection open until stdin reaches end of file.
 * Prints "connected N refused M errno E" (E: the first failure's errno, 0
 * if none) once all attempts are made. A connection the daemon accepts and
 * then closes (too many clients) counts as refused.
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
	int count, connected = 0, refused = 0, first_err = 0;
	char c;

	if (argc != 3) {
		fprintf(stderr, "usage: holdconn PATH COUNT\n");
		return 2;
	}
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", argv[1]);
	count = atoi(argv[2]);
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
		connected++;
	}
	printf("connected %d refused %d errno %d\n", connected, refused, first_err);
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	return 0;
}
