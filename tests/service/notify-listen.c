/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * notify-listen PATH SECONDS [CONTROL]: stand in for systemd's side of
 * $NOTIFY_SOCKET. Binds an AF_UNIX datagram socket at PATH and prints
 * every assignment of every message it receives, one per line, after the
 * CLOCK_MONOTONIC time in ms since it started ("1234 READY=1"), until
 * SECONDS have passed or SIGTERM. Prints "listening" once bound so that
 * the caller knows when to start the daemon.
 *
 * On READY=1 it looks at once at what READY promises, before reading the
 * next message: the page's state (clockd_status, page from $CLOCKD_SHM)
 * and whether the control socket CONTROL accepts a connection:
 * "1234 CHECK page live socket ok".
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <clockd/clockd.h>

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static const char *state_name(uint32_t state)
{
	switch (state) {
	case CLOCKD_STATE_LIVE: return "live";
	case CLOCKD_STATE_STALE: return "stale";
	case CLOCKD_STATE_GONE: return "gone";
	default: return "absent";
	}
}

/* Does @path accept a SOCK_SEQPACKET connection? */
static const char *socket_answers(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, r;

	if (!path || strlen(path) >= sizeof(sa.sun_path))
		return "none";
	memcpy(sa.sun_path, path, strlen(path));
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return "error";
	r = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	close(fd);
	return r == 0 ? "ok" : "refused";
}

/* One datagram: "A=1\nB=2" becomes two lines. */
static void print_message(long long at, char *msg, const char *control)
{
	char *save = NULL;
	struct clockd_status st;

	for (char *l = strtok_r(msg, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		printf("%lld %s\n", at, l);
		if (strcmp(l, "READY=1") != 0)
			continue;
		if (clockd_status(&st, sizeof(st)) < 0)
			st.state = CLOCKD_STATE_ABSENT;
		printf("%lld CHECK page %s socket %s\n", at, state_name(st.state), socket_answers(control));
	}
	fflush(stdout);
}

int main(int argc, char **argv)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct sigaction act = { .sa_handler = on_term };
	long long start = now_ms(), limit;
	char buf[4096];
	int fd;

	if (argc < 3 || argc > 4 || strlen(argv[1]) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "usage: notify-listen PATH SECONDS [CONTROL]\n");
		return 2;
	}
	limit = atoll(argv[2]) * 1000;
	sigaction(SIGTERM, &act, NULL);
	memcpy(sa.sun_path, argv[1], strlen(argv[1]));
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		perror("notify-listen: socket/bind");
		return 1;
	}
	printf("0 listening\n");
	fflush(stdout);
	while (!stop && now_ms() - start < limit) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (poll(&p, 1, 100) <= 0)
			continue;
		n = recv(fd, buf, sizeof(buf) - 1, 0);
		if (n < 0 && errno != EINTR) {
			perror("notify-listen: recv");
			return 1;
		}
		if (n <= 0)
			continue;
		buf[n] = '\0';
		print_message(now_ms() - start, buf, argc == 4 ? argv[3] : NULL);
	}
	unlink(argv[1]);
	return 0;
}
