/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * For tests/stress/oom.sh, which runs clockd under failalloc.so. This
 * program is not preloaded: it writes the injector's control file and is
 * the daemon's client.
 *
 *   oomclient ctl PATH [MODE]  make the control file if needed; with MODE,
 *                              set it (and restart the call count); print
 *                              "mode M calls C failed F"
 *   oomclient hold CTL         a client with BASE_TIMERS timers armed on one
 *                              CPU (its first slot chunk, less one slot)
 *                              sets mode 1 and arms EXTRA more: the one
 *                              left in the chunk is accepted and fires,
 *                              the others need a new chunk and get ENOMEM;
 *                              the base timers fire. It prints what it
 *                              saw, then "waiting"; after a line on stdin
 *                              (the test has set mode 0) it arms the EXTRA
 *                              again: all are accepted and fire.
 *   oomclient once             one timer through libclockd: "fired", or
 *                              "error: WHY" (exit 1) or "no fire" (exit 2)
 *   oomclient loop N           N rounds of: a child arming LOOP_TIMERS
 *                              timers (two chunks) and cancelling half,
 *                              then exiting; a raw socket client saying
 *                              HELLO, ARM, ARM, CANCEL and closing. Prints
 *                              "rounds N lib_errors A raw_errors B"
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <clockd/clockd.h>
#include "shared/ctlproto.h"
#include "shared/timerrec.h"
#include "tests/ctlraw.h"
#include "tests/stress/failalloc.h"
#include "tests/util.h"

#define BASE_TIMERS 1023u  /* TB_CHUNK_SLOTS - 1 */
#define EXTRA 100u
#define LOOP_TIMERS 1100u
#define TIMEOUT_NS 15000000000LL

static int64_t now_ns(void)
{
	return tu_mono_ns();
}

static void nap(void)
{
	struct timespec ts = { .tv_nsec = 1000000 };

	nanosleep(&ts, NULL);
}

/* ---- the control file ---- */

static struct failalloc_ctl *ctl_map(const char *path)
{
	struct failalloc_ctl *c;
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);

	if (fd < 0 || ftruncate(fd, sizeof(*c)) < 0) {
		fprintf(stderr, "oomclient: %s: %s\n", path, strerror(errno));
		exit(1);
	}
	c = mmap(NULL, sizeof(*c), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (c == MAP_FAILED) {
		fprintf(stderr, "oomclient: mmap %s: %s\n", path, strerror(errno));
		exit(1);
	}
	__atomic_store_n(&c->magic, FAILALLOC_MAGIC, __ATOMIC_RELAXED);
	return c;
}

static void ctl_set(struct failalloc_ctl *c, uint32_t mode)
{
	__atomic_store_n(&c->mode, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&c->calls, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&c->mode, mode, __ATOMIC_SEQ_CST);
}

static int cmd_ctl(const char *path, const char *mode)
{
	struct failalloc_ctl *c = ctl_map(path);

	if (mode)
		ctl_set(c, (uint32_t)strtoul(mode, NULL, 10));
	printf("mode %u calls %llu failed %llu\n", __atomic_load_n(&c->mode, __ATOMIC_RELAXED),
	       (unsigned long long)__atomic_load_n(&c->calls, __ATOMIC_RELAXED),
	       (unsigned long long)__atomic_load_n(&c->failed, __ATOMIC_RELAXED));
	return 0;
}

/* ---- timers through libclockd ---- */

static void count(struct clockd_timer *t, void *arg)
{
	(void)t;
	__atomic_add_fetch((unsigned *)arg, 1, __ATOMIC_RELAXED);
}

/* The lowest CPU we may run on: all timers go to one base. */
static unsigned first_cpu(void)
{
	int cpu;

	return tu_cpus(&cpu, 1) == 1 ? (unsigned)cpu : 0;
}

static int arm(struct clockd_timer *t, unsigned *counter, uint64_t expires)
{
	clockd_timer_setup(t, count, counter);
	return clockd_add_timer_on(t, expires, first_cpu());
}

/* Wait until *@v >= @want; false on timeout. */
static int wait_for(const unsigned *v, unsigned want)
{
	int64_t end = now_ns() + TIMEOUT_NS;

	while (__atomic_load_n(v, __ATOMIC_RELAXED) < want)
		if (now_ns() > end)
			return 0;
		else
			nap();
	return 1;
}

static struct clockd_timer base[BASE_TIMERS], extra[EXTRA], canary, sentinel;
static unsigned base_fired, extra_fired[EXTRA], canary_fired, sentinel_fired;

/* Arm the EXTRA timers far away, then a sentinel due now: the records of
 * one base are applied and answered in order, so once the sentinel is no
 * longer pending, each EXTRA timer is either still pending (accepted) or
 * was refused. The accepted ones are then moved to now and must fire.
 * (Due at once from the start, a fired one would free its id for a later
 * arm, and the ids would not be those counted on.) Prints "LABEL:
 * accepted A fired F enomem E other O"; returns F. */
static unsigned arm_extra(const char *label)
{
	unsigned accepted = 0, fired = 0, enomem = 0;
	bool ok[EXTRA] = { false };
	uint64_t far = clockd_get_jiffies_64() + 3600 * (uint64_t)clockd_hz();
	int64_t end = now_ns() + TIMEOUT_NS;

	for (unsigned i = 0; i < EXTRA; i++) {
		extra_fired[i] = 0;
		arm(&extra[i], &extra_fired[i], far);
	}
	if (arm(&sentinel, &sentinel_fired, clockd_get_jiffies_64() + 1) == 0)
		while (clockd_timer_pending(&sentinel) == 1 && now_ns() < end)
			nap();
	clockd_del_timer_sync(&sentinel);
	for (unsigned i = 0; i < EXTRA; i++) {
		if (clockd_timer_pending(&extra[i]) == 1) {
			accepted++;
			ok[i] = true;
			clockd_mod_timer(&extra[i], clockd_get_jiffies_64() + 1);
		} else if (clockd_del_timer(&extra[i]) < 0 && errno == ENOMEM) {
			/* a refused arm's error comes with the next call on it */
			enomem++;
		}
	}
	for (unsigned i = 0; i < EXTRA; i++)
		if (ok[i] && wait_for(&extra_fired[i], 1))
			fired++;
	printf("%s: accepted %u fired %u enomem %u other %u\n", label, accepted, fired, enomem,
	       EXTRA - accepted - enomem);
	fflush(stdout);
	return fired;
}

static int cmd_hold(const char *path)
{
	struct failalloc_ctl *c = ctl_map(path);
	unsigned hz = clockd_hz(), pending = 0;
	uint64_t j = clockd_get_jiffies_64();
	char line[16];

	for (unsigned i = 0; i < BASE_TIMERS; i++) {
		if (arm(&base[i], &base_fired, j + 5 * (uint64_t)hz) < 0) {
			printf("error: arming base timer %u: %s\n", i, strerror(errno));
			return 1;
		}
	}
	/* The arms are applied in order: once the canary fired, the chunk
	 * holds all the base timers. */
	if (arm(&canary, &canary_fired, j + 1) < 0 || !wait_for(&canary_fired, 1)) {
		printf("error: the canary timer did not fire\n");
		return 1;
	}
	/* Its id (the chunk's last) is free again once its callback is over:
	 * the first EXTRA timer takes it. */
	clockd_del_timer_sync(&canary);
	ctl_set(c, 1);
	for (unsigned i = 0; i < BASE_TIMERS; i++)
		pending += clockd_timer_pending(&base[i]) == 1;
	printf("armed: base pending %u of %u\n", pending, BASE_TIMERS);
	arm_extra("oom");
	wait_for(&base_fired, BASE_TIMERS);
	printf("base: fired %u of %u\n", __atomic_load_n(&base_fired, __ATOMIC_RELAXED), BASE_TIMERS);
	printf("waiting\n");
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	return arm_extra("after") == EXTRA ? 0 : 1;
}

static int cmd_once(void)
{
	static struct clockd_timer t;
	static unsigned fired;

	if (arm(&t, &fired, clockd_get_jiffies_64() + 1) < 0) {
		printf("error: %s\n", strerror(errno));
		return 1;
	}
	if (!wait_for(&fired, 1)) {
		printf("no fire\n");
		return 2;
	}
	printf("fired\n");
	return 0;
}

/* ---- the loop ---- */

/* A libclockd client: arm LOOP_TIMERS far timers (ids over two chunks),
 * cancel every other one, exit with its timers armed. Exit 1 if a call
 * failed (the connection, under injected failures). */
static void lib_round(void)
{
	static struct clockd_timer t[LOOP_TIMERS];
	static unsigned never;
	uint64_t far = clockd_get_jiffies_64() + 3600 * (uint64_t)clockd_hz();

	for (unsigned i = 0; i < LOOP_TIMERS; i++)
		if (arm(&t[i], &never, far) < 0)
			_exit(1);
	for (unsigned i = 0; i < LOOP_TIMERS; i += 2)
		if (clockd_del_timer(&t[i]) < 0 && errno != ENOMEM)
			_exit(1);
	_exit(0);
}

static int raw_send(int fd, struct ctl_msg *m)
{
	return ctlraw_send(fd, m, 0);
}

/* One reply (its descriptors closed): 0, or -1 if none came. */
static int raw_recv(int fd, struct ctl_msg *m)
{
	return ctlraw_recv(fd, 10000, m, NULL, NULL) == 1 ? 0 : -1;
}

/* HELLO, two socket ARMs (ids in two chunks), a CANCEL, close. 1 if a
 * request was refused or the connection closed, else 0. */
static int raw_round(unsigned cpu)
{
	uint32_t ids[] = { 0, 1500 };
	struct ctl_msg m;
	int fd, bad = 0;

	fd = ctlraw_connect(getenv("CLOCKD_SOCKET"));
	if (fd < 0)
		goto out;
	ctl_msg_init(&m, CTL_HELLO, 1);
	m.u.hello.min_version = m.u.hello.max_version = CTL_VERSION;
	if (raw_send(fd, &m) < 0 || raw_recv(fd, &m) < 0 || m.type != CTL_HELLO_ACK)
		goto out;
	for (unsigned i = 0; i < 3; i++) {
		ctl_msg_init(&m, i < 2 ? CTL_ARM : CTL_CANCEL, 2 + i);
		if (i < 2)
			m.u.arm = (struct ctl_arm){ .timer_id = ids[i], .cpu = cpu,
						    .clock = CTL_CLOCK_MONOTONIC, .expires = 3600000000000ull };
		else
			m.u.cancel.timer_id = ids[0];
		if (raw_send(fd, &m) < 0 || raw_recv(fd, &m) < 0)
			goto out;
		bad |= m.type != CTL_OK;
	}
	close(fd);
	return bad;
out:
	if (fd >= 0)
		close(fd);
	return 1;
}

static int cmd_loop(unsigned rounds)
{
	unsigned lib_errors = 0, raw_errors = 0;
	int st;

	for (unsigned r = 0; r < rounds; r++) {
		pid_t pid;

		fflush(stdout);
		pid = fork();
		if (pid < 0)
			return perror("fork"), 1;
		if (pid == 0)
			lib_round();
		raw_errors += (unsigned)raw_round(first_cpu());
		if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			lib_errors++;
	}
	printf("rounds %u lib_errors %u raw_errors %u\n", rounds, lib_errors, raw_errors);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 3 && strcmp(argv[1], "ctl") == 0)
		return cmd_ctl(argv[2], argc > 3 ? argv[3] : NULL);
	if (argc == 3 && strcmp(argv[1], "hold") == 0)
		return cmd_hold(argv[2]);
	if (argc == 2 && strcmp(argv[1], "once") == 0)
		return cmd_once();
	if (argc == 3 && strcmp(argv[1], "loop") == 0)
		return cmd_loop((unsigned)strtoul(argv[2], NULL, 10));
	fprintf(stderr, "usage: oomclient ctl PATH [MODE] | hold CTL | once | loop N\n");
	return 2;
}
