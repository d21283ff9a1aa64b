/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Hostile clients of issue #16, speaking the protocol themselves.
 *
 *   hostile corrupt SOCKET N
 * The log flood: N times, connect, HELLO, map the shared memory handed
 * over, move the first submission ring's tail beyond the ring, wake the
 * base, wait a moment for it to look (2 ms), close. Prints "done N
 * corrupted C refused R" (C: rings corrupted, R: connections the daemon
 * refused, as a daemon whose clients are not yet freed does beyond
 * max_clients_per_user). Exit 0, or 1 if no ring could be corrupted.
 *
 *   hostile hello SOCKET
 * A timer client that says HELLO and holds on until stdin reaches its end
 * (for CLIENT_STATS to show it). Prints "hello" once served; exit 1 if not.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "shared/ring.h"
#include "shared/timerrec.h"
#include "tests/ctlraw.h"

static void close_fds(int *fds, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		close(fds[i]);
}

/* One round: 1 corrupted, 0 refused or no ring to corrupt. */
static int round_once(const char *path)
{
	int fds[CTLRAW_MAXFDS], fd = ctlraw_connect(path), rc = 0;
	const struct timespec pause = { .tv_nsec = 2000000 };
	unsigned nfds = 0;
	struct ring_hdr *sub;
	struct ctl_msg m;
	uint64_t one = 1;
	struct stat st;
	void *map;

	if (fd < 0)
		return 0;
	ctl_msg_init(&m, CTL_HELLO, 1);
	m.u.hello.min_version = m.u.hello.max_version = CTL_VERSION;
	if (ctlraw_send(fd, &m, 0) < 0 || ctlraw_recv(fd, 5000, &m, fds, &nfds) != 1 ||
	    m.type != CTL_HELLO_ACK || nfds < 3)
		goto out;
	if (fstat(fds[0], &st) < 0 || st.st_size < (off_t)(TIMER_SHM_HDR + sizeof(*sub)))
		goto out;
	map = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fds[0], 0);
	if (map == MAP_FAILED)
		goto out;
	sub = (struct ring_hdr *)((char *)map + TIMER_SHM_HDR);
	__atomic_store_n(&sub->tail, sub->head + sub->slots + 100, __ATOMIC_RELEASE);
	rc = write(fds[1], &one, sizeof(one)) == (ssize_t)sizeof(one);
	nanosleep(&pause, NULL);
	munmap(map, (size_t)st.st_size);
out:
	close_fds(fds, nfds);
	close(fd);
	return rc;
}

static int hello_and_hold(const char *path)
{
	int fds[CTLRAW_MAXFDS], fd = ctlraw_connect(path);
	unsigned nfds = 0;
	struct ctl_msg m;
	char c;

	if (fd < 0)
		return 1;
	ctl_msg_init(&m, CTL_HELLO, 1);
	m.u.hello.min_version = m.u.hello.max_version = CTL_VERSION;
	if (ctlraw_send(fd, &m, 0) < 0 || ctlraw_recv(fd, 5000, &m, fds, &nfds) != 1 ||
	    m.type != CTL_HELLO_ACK) {
		fprintf(stderr, "hostile: HELLO not answered\n");
		return 1;
	}
	printf("hello\n");
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	close_fds(fds, nfds);
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long n, done = 0, corrupted = 0;

	if (argc == 3 && strcmp(argv[1], "hello") == 0)
		return hello_and_hold(argv[2]);
	if (argc != 4 || strcmp(argv[1], "corrupt") != 0) {
		fprintf(stderr, "usage: hostile corrupt SOCKET N | hostile hello SOCKET\n");
		return 2;
	}
	argv++;
	n = strtoul(argv[2], NULL, 10);
	for (; done < n; done++)
		corrupted += (unsigned long)round_once(argv[1]);
	printf("done %lu corrupted %lu refused %lu\n", done, corrupted, done - corrupted);
	return corrupted ? 0 : 1;
}
