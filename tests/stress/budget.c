/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The CPU and memory budgets of issue #16, measured.
 *
 *   budget cpu DAEMON_PID CPU SECONDS
 * A well-behaved client times a 1 ms periodic timer on CPU @cpu for
 * SECONDS quiet, then for SECONDS while two attackers (processes of their
 * own) each keep 1000 periodic timers of 1 us on that CPU, reading every
 * expiry (CLOCKD_SIGEV_FD). Prints the daemon's CPU time over each phase
 * (utime + stime of /proc/PID/stat, in % of one core), the p50/p99/max
 * lateness of the well-behaved timer quiet and flooded, and what the
 * attackers got (expiries notified and overruns): "cpu_quiet Q cpu_flood
 * F p99_quiet A p99_flood B ratio R expiries E overruns O", then the CPU
 * share of a SCHED_OTHER busy loop pinned to that CPU throughout (a process
 * of its own; % of one core), quiet and flooded: "busy_quiet X busy_flood
 * Y". With the daemon's timer threads at SCHED_FIFO (the default), the
 * loop keeps running beside the flood only if the budgets hold.
 *
 *   budget saturate DAEMON_PID NCPUS SECONDS
 * A SCHED_OTHER busy loop pinned to each of CPUs 0 .. NCPUS - 1, SECONDS
 * quiet, then SECONDS while two clients offer 100 k expiries a second
 * (periodic 1 ms timers spread over the CPUs, CLOCKD_SIGEV_THREAD_CPU) and
 * the one-shot re-arm flood (4096 jiffies timers a CPU, each re-armed
 * from its callback for the next jiffy, as issue #27 found them). Prints
 * "daemon_quiet Q daemon_flood F busy0 Q0 F0 busy1 Q1 F1 ...": % of one
 * core, each phase.
 *
 *   budget mem SOCKET CLIENTS
 * One user's CLIENTS clients each say HELLO and arm every timer id their
 * HELLO_ACK gives them (one-shot, an hour away), over the socket. Prints
 * "hello H edquot D timers T beyond_refused B in S s": the clients served,
 * those refused with EDQUOT, the timers armed in all (at most 100 a
 * client), the clients whose ARM of the first id past their ids was
 * refused, and how long it took. Then holds on until killed. A step with
 * no reply in 30 s ends it with status 1, the step said on stderr.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sched.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <clockd/clockd.h>
#include "shared/ctlproto.h"
#include "tests/ctlraw.h"
#include "tests/util.h"

#define NSEC_PER_SEC 1000000000LL
#define ATTACK_TIMERS 1000
#define MAX_SAMPLES 200000

static int64_t mono_ns(void)
{
	struct timespec ts;

	clockd_clock_gettime(CLOCKD_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

/* The daemon's CPU time so far, ns. */
static int64_t daemon_cpu_ns(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long ut = 0, st = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	f = fopen(path, "re");
	if (!f || !fgets(buf, sizeof(buf), f)) {
		if (f)
			fclose(f);
		return -1;
	}
	fclose(f);
	p = strrchr(buf, ')');
	/* after ") ": state ppid pgrp session tty tpgid flags minflt cminflt
	 * majflt cmajflt utime stime */
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
		return -1;
	return (int64_t)((ut + st) * (NSEC_PER_SEC / sysconf(_SC_CLK_TCK)));
}

static int cmp64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* -1 with errno kept, timer @t deleted: time_client's failures. */
static int fail_deleting(clockd_timer_t t)
{
	int err = errno;

	clockd_timer_delete(t);
	errno = err;
	return -1;
}

static const char *client_step; /* where time_client failed */
static size_t client_samples;    /* and after how many expiries */

/* Time a 1 ms periodic timer on @cpu for @secs: its lateness quantiles
 * (@q: p50, p99, max) in ns. */
static int time_client(int cpu, int secs, int64_t q[3])
{
	static int64_t late[MAX_SAMPLES];
	struct clockd_sigevent sev = { .notify = CLOCKD_SIGEV_FD, .cpu = cpu };
	struct itimerspec its = { .it_interval = { 0, 1000000 }, .it_value = { 0, 1000000 } };
	int64_t start, next, end, now;
	clockd_timer_t t;
	uint64_t n;
	size_t k = 0;
	int fd;

	client_step = "timer_create";
	client_samples = 0;
	if (clockd_timer_create(CLOCKD_MONOTONIC, &sev, &t) < 0)
		return -1;
	fd = clockd_timer_fd(t);
	client_step = "timer_settime";
	/* EAGAIN: the daemon cannot take it for now (a loaded machine kept
	 * it from answering the connection in time): try again, as its
	 * errno says, for up to 10 s. */
	for (int tries = 0;; tries++) {
		start = mono_ns();
		next = start + 1000000;
		its.it_value.tv_sec = next / NSEC_PER_SEC;
		its.it_value.tv_nsec = next % NSEC_PER_SEC;
		if (clockd_timer_settime(t, TIMER_ABSTIME, &its, NULL) == 0)
			break;
		if (errno != EAGAIN || tries == 100)
			return fail_deleting(t);
		fprintf(stderr, "budget: timer_settime: EAGAIN, trying again\n");
		poll(NULL, 0, 100);
	}
	/* Timed from the arm's return: a first arm waits for the daemon's
	 * main loop (the connection), which a loaded machine can keep for
	 * seconds; the expiries due meanwhile come as one, late. */
	now = mono_ns();
	if (now - start > NSEC_PER_SEC)
		fprintf(stderr, "budget: timer_settime took %.1f s\n", (double)(now - start) / 1e9);
	end = now + (int64_t)secs * NSEC_PER_SEC;
	while ((now = mono_ns()) < end && k < MAX_SAMPLES) {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		/* A gap of seconds is a timer that stopped; under make check's
		 * other loads (busy.sh's loops on both CPUs beside this
		 * one's) a SCHED_OTHER delivery thread once waited 1 s: the
		 * lateness is what the figures below report. */
		int r = poll(&p, 1, 5000);
		ssize_t got = r == 1 ? read(fd, &n, sizeof(n)) : -1;

		if (got < 0 && r == 1 && errno == EAGAIN)
			continue; /* not yet (clockd_timer_create(3)'s example) */
		if (r == 0)
			errno = ETIMEDOUT; /* no expiry for 5 s */
		if (got != (ssize_t)sizeof(n)) {
			client_step = r == 0 ? "poll (no expiry for 5 s)" : r < 0 ? "poll" : "read";
			client_samples = k;
			return fail_deleting(t);
		}
		now = mono_ns();
		/* The last of the n expiries notified was due at next + (n - 1) ms. */
		next += (int64_t)(n - 1) * 1000000;
		late[k++] = now - next;
		next += 1000000;
	}
	clockd_timer_delete(t);
	if (k == 0) {
		client_step = "the timing (no expiry read)";
		errno = ETIMEDOUT;
		return -1;
	}
	qsort(late, k, sizeof(late[0]), cmp64);
	q[0] = late[k / 2];
	q[1] = late[k * 99 / 100];
	q[2] = late[k - 1];
	return 0;
}

/* An attacker: 1000 periodic timers of 1 us on @cpu, every expiry read,
 * until killed; its totals on @out at SIGTERM. */
static volatile sig_atomic_t stop;
static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static void attacker(int cpu, int out)
{
	static clockd_timer_t t[ATTACK_TIMERS];
	static struct pollfd pfd[ATTACK_TIMERS];
	struct clockd_sigevent sev = { .notify = CLOCKD_SIGEV_FD, .cpu = cpu };
	struct itimerspec its = { .it_interval = { 0, 1000 }, .it_value = { 0, 1000 } };
	unsigned long long total[2] = { 0, 0 };
	uint64_t n;

	signal(SIGTERM, on_term);
	for (int i = 0; i < ATTACK_TIMERS; i++) {
		if (clockd_timer_create(CLOCKD_MONOTONIC, &sev, &t[i]) < 0 ||
		    clockd_timer_settime(t[i], 0, &its, NULL) < 0)
			_exit(3);
		pfd[i].fd = clockd_timer_fd(t[i]);
		pfd[i].events = POLLIN;
	}
	while (!stop) {
		if (poll(pfd, ATTACK_TIMERS, 100) <= 0)
			continue;
		for (int i = 0; i < ATTACK_TIMERS; i++) {
			if (!(pfd[i].revents & POLLIN) || read(pfd[i].fd, &n, sizeof(n)) != (ssize_t)sizeof(n))
				continue;
			total[0] += n;
			total[1] += (unsigned long long)clockd_timer_getoverrun(t[i]);
		}
	}
	if (write(out, total, sizeof(total)) != (ssize_t)sizeof(total))
		_exit(4);
	_exit(0);
}

/* A SCHED_OTHER busy loop pinned to @cpu, until killed: its pid. */
static pid_t busy_loop(int cpu)
{
	pid_t pid = fork();
	cpu_set_t set;

	if (pid != 0)
		return pid;
	/* Never outlive the test (an error return, a kill). */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() == 1)
		_exit(6);
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) < 0)
		_exit(5);
	for (volatile unsigned long spin = 0;; spin++)
		;
}

static int cmd_cpu(pid_t daemon, int cpu, int secs)
{
	int64_t q0[3], q1[3], c0, c1, c2, t0, t1, t2, b0, b1, b2;
	unsigned long long got[2], sum[2] = { 0, 0 };
	pid_t att[2], busy;
	int pfd[2], st;

	if (pipe(pfd) < 0)
		return 2;
	busy = busy_loop(cpu);
	if (busy < 0)
		return 2;
	c0 = daemon_cpu_ns(daemon);
	b0 = daemon_cpu_ns(busy);
	t0 = mono_ns();
	if (time_client(cpu, secs, q0) < 0)
		return fprintf(stderr, "budget: the quiet client failed in %s after %zu expiries: %s\n", client_step,
			       client_samples, strerror(errno)),
		       1;
	c1 = daemon_cpu_ns(daemon);
	b1 = daemon_cpu_ns(busy);
	t1 = mono_ns();
	c1 -= c0;
	b1 -= b0;
	t1 -= t0;
	for (int i = 0; i < 2; i++) {
		att[i] = fork();
		if (att[i] == 0)
			attacker(cpu, pfd[1]);
	}
	close(pfd[1]); /* an attacker gone without its counts is EOF, not a hang */
	sleep(1); /* the attackers arm */
	c0 = daemon_cpu_ns(daemon);
	b0 = daemon_cpu_ns(busy);
	t0 = mono_ns();
	if (time_client(cpu, secs, q1) < 0)
		return fprintf(stderr, "budget: the flooded client failed in %s after %zu expiries: %s\n", client_step,
			       client_samples, strerror(errno)),
		       1;
	c2 = daemon_cpu_ns(daemon) - c0;
	b2 = daemon_cpu_ns(busy) - b0;
	t2 = mono_ns() - t0;
	kill(busy, SIGKILL);
	waitpid(busy, &st, 0);
	for (int i = 0; i < 2; i++) {
		struct pollfd pf = { .fd = pfd[0], .events = POLLIN };

		kill(att[i], SIGTERM);
		/* One that does not leave on SIGTERM (10 s, a loaded machine)
		 * is killed: its counts are lost, the run ends. */
		if (poll(&pf, 1, 10000) == 1 && read(pfd[0], got, sizeof(got)) == (ssize_t)sizeof(got)) {
			sum[0] += got[0];
			sum[1] += got[1];
		} else {
			fprintf(stderr, "budget: attacker %d: no counts 10 s after SIGTERM\n", (int)att[i]);
			kill(att[i], SIGKILL);
		}
		waitpid(att[i], &st, 0);
	}
	printf("cpu_quiet %.1f cpu_flood %.1f p50_quiet %.1f p50_flood %.1f p99_quiet %.1f p99_flood %.1f "
	       "max_quiet %.1f max_flood %.1f ratio %.2f expiries %llu overruns %llu busy_quiet %.1f busy_flood %.1f\n",
	       100.0 * (double)c1 / (double)t1, 100.0 * (double)c2 / (double)t2,
	       (double)q0[0] / 1e3, (double)q1[0] / 1e3, (double)q0[1] / 1e3, (double)q1[1] / 1e3,
	       (double)q0[2] / 1e3, (double)q1[2] / 1e3, q0[1] > 0 ? (double)q1[1] / (double)q0[1] : 0.0,
	       sum[0], sum[1], 100.0 * (double)b1 / (double)t1, 100.0 * (double)b2 / (double)t2);
	return 0;
}

/* ---- saturation (issue #27): 100 k fires/s and the one-shot re-arm flood ---- */

#define SAT_FIRES_PER_SEC 100000
#define SAT_REARM_TIMERS 4096
#define SAT_MAX_CPUS 64

static void count_fire(union sigval v)
{
	(void)v;
}

/* 100 k expiries a second offered: periodic 1 ms timers spread over the
 * @ncpus CPUs, run on the library's pinned threads; until killed. */
static void offer_periodic(int ncpus)
{
	int per_cpu = SAT_FIRES_PER_SEC / 1000 / ncpus;

	for (int cpu = 0; cpu < ncpus; cpu++) {
		for (int i = 0; i < per_cpu; i++) {
			struct clockd_sigevent sev = { .notify = CLOCKD_SIGEV_THREAD_CPU, .cpu = cpu,
						       .fn = count_fire };
			struct itimerspec its = { .it_interval = { 0, 1000000 },
						  .it_value = { 0, 1000000 + i * (1000000 / per_cpu) } };
			clockd_timer_t t;

			if (clockd_timer_create(CLOCKD_MONOTONIC, &sev, &t) < 0 ||
			    clockd_timer_settime(t, 0, &its, NULL) < 0)
				_exit(3);
		}
	}
	for (;;)
		pause();
}

/* The kernel's idiom: one-shot jiffies timers re-armed from their
 * callbacks, mod_timer(t, jiffies + 1), SAT_REARM_TIMERS on each CPU. */
static void rearm_fn(struct clockd_timer *t, void *arg)
{
	(void)arg;
	clockd_mod_timer(t, clockd_get_jiffies_64() + 1);
}

static void offer_rearm(int ncpus)
{
	static struct clockd_timer t[SAT_MAX_CPUS][SAT_REARM_TIMERS];

	for (int cpu = 0; cpu < ncpus && cpu < SAT_MAX_CPUS; cpu++) {
		for (int i = 0; i < SAT_REARM_TIMERS; i++) {
			if (clockd_timer_setup(&t[cpu][i], rearm_fn, NULL) < 0 ||
			    clockd_add_timer_on(&t[cpu][i], clockd_get_jiffies_64() + 1, (unsigned)cpu) < 0)
				_exit(3);
		}
	}
	for (;;)
		pause();
}

static pid_t offer(void (*fn)(int), int ncpus)
{
	pid_t pid = fork();

	if (pid == 0) {
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() == 1)
			_exit(6);
		fn(ncpus);
	}
	return pid;
}

/* The busy loops' CPU time (@b) and the daemon's (*@d) over @secs. */
static int64_t phase(pid_t daemon, const pid_t *busy, int ncpus, int secs, int64_t *b, int64_t *d)
{
	int64_t t0 = mono_ns(), d0 = daemon_cpu_ns(daemon), b0[SAT_MAX_CPUS];

	for (int i = 0; i < ncpus; i++)
		b0[i] = daemon_cpu_ns(busy[i]);
	sleep((unsigned)secs);
	for (int i = 0; i < ncpus; i++)
		b[i] = daemon_cpu_ns(busy[i]) - b0[i];
	*d = daemon_cpu_ns(daemon) - d0;
	return mono_ns() - t0;
}

static int cmd_saturate(pid_t daemon, int ncpus, int secs)
{
	int64_t bq[SAT_MAX_CPUS], bf[SAT_MAX_CPUS], dq, df, tq, tf;
	pid_t busy[SAT_MAX_CPUS], off[2];
	int st;

	if (ncpus < 1 || ncpus > SAT_MAX_CPUS)
		return 2;
	for (int i = 0; i < ncpus; i++)
		if ((busy[i] = busy_loop(i)) < 0)
			return 2;
	tq = phase(daemon, busy, ncpus, secs, bq, &dq);
	off[0] = offer(offer_periodic, ncpus);
	off[1] = offer(offer_rearm, ncpus);
	sleep(1); /* the offers arm */
	tf = phase(daemon, busy, ncpus, secs, bf, &df);
	for (int i = 0; i < 2; i++) {
		if (waitpid(off[i], &st, WNOHANG) != 0)
			return fprintf(stderr, "budget: an offering client failed (status %d)\n", st), 1;
	}
	printf("daemon_quiet %.1f daemon_flood %.1f", 100.0 * (double)dq / (double)tq, 100.0 * (double)df / (double)tf);
	for (int i = 0; i < ncpus; i++)
		printf(" busy%d %.1f %.1f", i, 100.0 * (double)bq[i] / (double)tq, 100.0 * (double)bf[i] / (double)tf);
	printf("\n");
	for (int i = 0; i < 2; i++) {
		kill(off[i], SIGKILL);
		waitpid(off[i], &st, 0);
	}
	for (int i = 0; i < ncpus; i++) {
		kill(busy[i], SIGKILL);
		waitpid(busy[i], &st, 0);
	}
	return 0;
}

/* mem's failure: the client, what it was doing and how it failed, for
 * the test's line (stderr). */
static int mem_failed(int client, const char *step, const char *how, int64_t t0)
{
	fprintf(stderr, "client %d: %s: %s after %.1f s\n", client, step, how, (double)(tu_mono_ns() - t0) / 1e9);
	return 1;
}

/* Send @m on @fd and take its reply within 30 s: NULL, or how it failed. */
static const char *mem_ask(int fd, struct ctl_msg *m, int *fds, unsigned *nfds)
{
	static char how[128];
	int r;

	if (ctlraw_send(fd, m, 0) < 0) {
		snprintf(how, sizeof(how), "send: %s", strerror(errno));
		return how;
	}
	r = ctlraw_recv(fd, 30000, m, fds, nfds);
	return r == 1 ? NULL : r == 0 ? "the daemon closed the connection" : "no reply (or not one that decodes) in 30 s";
}

static int cmd_mem(const char *path, int clients)
{
	int fds[CTLRAW_MAXFDS], hello = 0, edquot = 0, beyond = 0;
	unsigned long long timers = 0;
	int64_t t0 = tu_mono_ns(); /* the kernel's clock: no daemon needed */

	/* A line at a time: what was done shows even if a step never ends. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (int i = 0; i < clients; i++) {
		int fd = ctlraw_connect(path);
		unsigned nfds = 0;
		struct ctl_msg m;
		const char *how;
		uint32_t quota;

		if (fd < 0)
			return mem_failed(i, "connect", strerror(errno), t0);
		ctl_msg_init(&m, CTL_HELLO, 1);
		m.u.hello.min_version = m.u.hello.max_version = CTL_VERSION;
		if ((how = mem_ask(fd, &m, fds, &nfds)))
			return mem_failed(i, "HELLO", how, t0);
		if (m.type == CTL_ERROR && m.u.error.errno_code == EDQUOT) {
			edquot++;
			close(fd);
			continue;
		}
		if (m.type != CTL_HELLO_ACK)
			return mem_failed(i, "HELLO", "a reply not HELLO_ACK", t0);
		hello++;
		quota = m.u.hello_ack.max_timers;
		/* Over the socket, at the message rate: a few ids are enough to
		 * show the share; the count armed is what the daemon accepted. */
		for (uint32_t id = 0; id < quota && id < 100; id++) {
			ctl_msg_init(&m, CTL_ARM, 2 + id);
			m.u.arm.timer_id = id;
			m.u.arm.clock = CTL_CLOCK_MONOTONIC;
			m.u.arm.expires = 3600ull * NSEC_PER_SEC;
			if ((how = mem_ask(fd, &m, NULL, NULL)))
				return mem_failed(i, "an ARM", how, t0);
			timers += m.type == CTL_OK;
		}
		/* One id past its ids: refused. */
		ctl_msg_init(&m, CTL_ARM, 1000000);
		m.u.arm.timer_id = quota;
		m.u.arm.clock = CTL_CLOCK_MONOTONIC;
		m.u.arm.expires = 3600ull * NSEC_PER_SEC;
		if ((how = mem_ask(fd, &m, NULL, NULL)))
			return mem_failed(i, "the ARM past its ids", how, t0);
		beyond += m.type == CTL_ERROR;
		printf("client %d quota %u\n", i, quota);
		/* held open: the fd stays until exit */
	}
	printf("hello %d edquot %d timers %llu beyond_refused %d in %.1f s\n", hello, edquot, timers, beyond,
	       (double)(tu_mono_ns() - t0) / 1e9);
	pause();
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 5 && strcmp(argv[1], "cpu") == 0)
		return cmd_cpu((pid_t)atol(argv[2]), atoi(argv[3]), atoi(argv[4]));
	if (argc == 5 && strcmp(argv[1], "saturate") == 0)
		return cmd_saturate((pid_t)atol(argv[2]), atoi(argv[3]), atoi(argv[4]));
	if (argc == 4 && strcmp(argv[1], "mem") == 0)
		return cmd_mem(argv[2], atoi(argv[3]));
	fprintf(stderr, "usage: budget cpu DAEMON_PID CPU SECONDS | budget saturate DAEMON_PID NCPUS SECONDS | "
			"budget mem SOCKET CLIENTS\n");
	return 2;
}
