/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "tests/ctlraw.h"

int ctlraw_connect(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, err;

	if (!path || strlen(path) >= sizeof(sa.sun_path)) {
		errno = path ? ENAMETOOLONG : EINVAL;
		return -1;
	}
	memcpy(sa.sun_path, path, strlen(path));
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		err = errno;
		close(fd);
		errno = err;
		return -1;
	}
	return fd;
}

int ctlraw_send(int fd, const struct ctl_msg *m, int flags)
{
	unsigned char buf[CTL_MSG_MAX];
	size_t n = ctl_encode(m, buf, sizeof(buf));

	return n && send(fd, buf, n, MSG_NOSIGNAL | flags) == (ssize_t)n ? 0 : -1;
}

/* Keep the descriptors of @mh in @fds, or close them. */
static unsigned take_fds(struct msghdr *mh, int *fds)
{
	unsigned n = 0;

	for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		for (size_t i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(fd));
			if (fds && n < CTLRAW_MAXFDS)
				fds[n++] = fd;
			else
				close(fd);
		}
	}
	return n;
}

int ctlraw_recv(int fd, int timeout_ms, struct ctl_msg *m, int *fds, unsigned *nfds)
{
	unsigned char buf[CTL_MSG_MAX + 1];
	union {
		char raw[CMSG_SPACE(sizeof(int) * CTLRAW_MAXFDS)];
		struct cmsghdr align;
	} ctrl;
	struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctrl.raw,
			     .msg_controllen = sizeof(ctrl.raw) };
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	char why[CTL_WHY_MAX];
	unsigned got;
	ssize_t n;

	if (nfds)
		*nfds = 0;
	if (poll(&pfd, 1, timeout_ms) != 1)
		return -1;
	n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	if (n < 0 && errno == ECONNRESET) {
		n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
		if (n < 0)
			return 0;
	}
	if (n < 0)
		return -1;
	got = take_fds(&mh, fds);
	if (nfds)
		*nfds = got;
	if (n == 0)
		return 0;
	if (ctl_decode(buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf), NULL, m, why, sizeof(why)) < 0) {
		fprintf(stderr, "ctlraw: an undecodable message: %s\n", why);
		return -1;
	}
	return 1;
}
