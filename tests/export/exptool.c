/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Test helper for the export tests, written apart from src/clockd/export.c
 * (its own copy of both layouts, from the ntpd and chrony descriptions) so
 * that a layout mistake in the daemon shows here.
 *
 *   exptool stat UNIT            "mode 0600 size 96 uid 0", exit 1 if none
 *   exptool create UNIT MODE [SIZE]  a segment as someone else left it
 *   exptool chown UNIT UID       give it to another owner (root only)
 *   exptool read UNIT SECONDS [LEAP]  wait for a valid mode-1 sample (with
 *                                leap indicator LEAP) and print
 *                                "count N leap L precision P offset_ns X"
 *                                (clock - receive), checking its fields
 *   exptool recv PATH SECONDS [LEAP]  bind a datagram socket at PATH, print
 *                                the first chrony SOCK sample received
 *                                (with leap LEAP)
 * The leap indicator is NTP's: 0 none, 1 insert, 2 delete, 3 unsynchronised.
 *   exptool hold UNIT SECONDS    attach the segment and stay attached
 * Exit 0 on success, 1 on a failed check or timeout, 2 on misuse.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include "tests/util.h"

struct shm_time {
	int mode;
	volatile int count;
	time_t clock_sec;
	int clock_usec;
	time_t receive_sec;
	int receive_usec;
	int leap;
	int precision;
	int nsamples;
	volatile int valid;
	unsigned clock_nsec;
	unsigned receive_nsec;
	int dummy[8];
};

struct sock_sample {
	struct timeval tv;
	double offset;
	int pulse;
	int leap;
	int pad;
	int magic;
};

static key_t key_of(const char *unit)
{
	return (key_t)(0x4e545030 + atoi(unit));
}

static int cmd_stat(char **argv)
{
	struct shmid_ds ds;
	int id = shmget(key_of(argv[0]), 0, 0);

	if (id < 0 || shmctl(id, IPC_STAT, &ds) < 0)
		return 1;
	printf("mode %04o size %zu uid %u\n", ds.shm_perm.mode & 0777u, (size_t)ds.shm_segsz,
	       (unsigned)ds.shm_perm.uid);
	return 0;
}

static int cmd_create(int argc, char **argv)
{
	size_t size = argc > 2 ? strtoul(argv[2], NULL, 0) : sizeof(struct shm_time);
	int mode = (int)strtoul(argv[1], NULL, 8);

	if (shmget(key_of(argv[0]), size, IPC_CREAT | IPC_EXCL | mode) < 0) {
		perror("shmget");
		return 1;
	}
	return 0;
}

static int cmd_chown(char **argv)
{
	struct shmid_ds ds;
	int id = shmget(key_of(argv[0]), 0, 0);

	if (id < 0 || shmctl(id, IPC_STAT, &ds) < 0)
		return 1;
	ds.shm_perm.uid = (uid_t)atoi(argv[1]);
	if (shmctl(id, IPC_SET, &ds) < 0) {
		perror("shmctl IPC_SET");
		return 1;
	}
	return 0;
}

/* hold UNIT SECONDS: attach the segment and stay attached (a process of
 * the user who made it, keeping write access) until killed. */
static int cmd_hold(char **argv)
{
	int id = shmget(key_of(argv[0]), 0, 0);

	if (id < 0 || shmat(id, NULL, 0) == (void *)-1) {
		perror("shmat");
		return 1;
	}
	sleep((unsigned)atoi(argv[1]));
	return 0;
}

static int64_t now_ns(void)
{
	return tu_mono_ns();
}

/* One consistent copy as chronyd takes it: valid, and count unchanged
 * around the copy (so even: the writer was not inside its update). */
static int shm_copy(struct shm_time *shm, struct shm_time *t)
{
	int c0 = shm->count;

	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	memcpy(t, (const void *)shm, sizeof(*t));
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return shm->valid && t->valid && c0 == shm->count && t->count == c0;
}

static int cmd_read(char **argv)
{
	int id = shmget(key_of(argv[0]), 0, 0);
	int64_t deadline = now_ns() + (int64_t)atoi(argv[1]) * 1000000000;
	struct shm_time *shm, t;
	struct timespec nap = { 0, 10000000 };
	int want_leap = argv[2] ? atoi(argv[2]) : -1;

	if (id < 0 || (shm = shmat(id, NULL, SHM_RDONLY)) == (void *)-1) {
		perror("shm");
		return 1;
	}
	while (!shm_copy(shm, &t) || (want_leap >= 0 && t.leap != want_leap)) {
		if (now_ns() > deadline) {
			fprintf(stderr, "no valid sample%s (mode %d valid %d count %d leap %d)\n",
				want_leap >= 0 ? " with that leap" : "", shm->mode, shm->valid, shm->count, shm->leap);
			return 1;
		}
		nanosleep(&nap, NULL);
	}
	if (t.leap < 0 || t.leap > 3 || t.mode != 1 || t.count % 2 != 0 || t.clock_nsec >= 1000000000u || t.receive_nsec >= 1000000000u ||
	    (unsigned)t.clock_usec != t.clock_nsec / 1000 || (unsigned)t.receive_usec != t.receive_nsec / 1000) {
		fprintf(stderr, "bad sample: mode %d count %d usec %d/%d nsec %u/%u\n", t.mode, t.count,
			t.clock_usec, t.receive_usec, t.clock_nsec, t.receive_nsec);
		return 1;
	}
	printf("count %d leap %d precision %d offset_ns %lld\n", t.count, t.leap, t.precision,
	       (long long)(((int64_t)t.clock_sec - (int64_t)t.receive_sec) * 1000000000 +
			   ((int64_t)t.clock_nsec - (int64_t)t.receive_nsec)));
	return 0;
}

static int cmd_recv(char **argv)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct pollfd pfd = { .events = POLLIN };
	struct sock_sample s;
	ssize_t n = -1;
	int64_t deadline = now_ns() + (int64_t)atoi(argv[1]) * 1000000000;
	int want_leap = argv[2] ? atoi(argv[2]) : -1;

	if (strlen(argv[0]) >= sizeof(sa.sun_path))
		return 2;
	strcpy(sa.sun_path, argv[0]);
	pfd.fd = socket(AF_UNIX, SOCK_DGRAM, 0);
	if (pfd.fd < 0 || bind(pfd.fd, (const struct sockaddr *)&sa, sizeof(sa)) < 0) {
		perror(argv[0]);
		return 1;
	}
	do {
		if (now_ns() > deadline || poll(&pfd, 1, 1000) < 0) {
			fprintf(stderr, "no datagram%s\n", want_leap >= 0 ? " with that leap" : "");
			unlink(argv[0]);
			return 1;
		}
		if (!(pfd.revents & POLLIN))
			continue;
		n = recv(pfd.fd, &s, sizeof(s) + 1, MSG_TRUNC);
	} while (n < 0 || (want_leap >= 0 && n == (ssize_t)sizeof(s) && s.leap != want_leap));
	unlink(argv[0]);
	if (n != (ssize_t)sizeof(s) || s.magic != 0x534f434b || s.pulse != 0 || s.tv.tv_usec < 0 ||
	    s.tv.tv_usec >= 1000000 || s.leap < 0 || s.leap > 3) {
		fprintf(stderr, "bad datagram: %zd bytes, magic 0x%x\n", n, n >= (ssize_t)sizeof(s) ? s.magic : 0);
		return 1;
	}
	printf("size %zd leap %d offset_ns %.0f\n", n, s.leap, s.offset * 1e9);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 3 && strcmp(argv[1], "stat") == 0)
		return cmd_stat(argv + 2);
	if (argc >= 4 && strcmp(argv[1], "create") == 0)
		return cmd_create(argc - 2, argv + 2);
	if (argc == 4 && strcmp(argv[1], "chown") == 0)
		return cmd_chown(argv + 2);
	if ((argc == 4 || argc == 5) && strcmp(argv[1], "read") == 0)
		return cmd_read(argv + 2);
	if ((argc == 4 || argc == 5) && strcmp(argv[1], "recv") == 0)
		return cmd_recv(argv + 2);
	if (argc == 4 && strcmp(argv[1], "hold") == 0)
		return cmd_hold(argv + 2);
	fprintf(stderr, "usage: exptool stat|create|chown|read|recv|hold ...\n");
	return 2;
}
