/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * CPU per expiry (issue #27): N periodic timers of one period, all due at
 * the same instants, expired by
 *   timerfd  N timerfds read by one thread (epoll),
 *   posix    N POSIX timers signalling one thread (SIGEV_THREAD_ID,
 *            sigwaitinfo, each signal counting 1 + its overrun),
 *   relay    N timerfds read by another process, which passes each
 *            wake-up's count on through one eventfd write to a thread of
 *            this one: the least any daemon that expires timers for a
 *            client can cost (two wake-ups an expiry where the others
 *            have one), the floor of the clockd side,
 *   clockd   N libclockd timers (CLOCKD_SIGEV_THREAD_CPU), each callback
 *            counting 1 + clockd_timer_getoverrun(),
 * every side on CPU 0, in phases of SECONDS in turn (side by side: each
 * repetition runs the three one after another, so all see the same
 * machine). CPU is this process's (all threads) plus, for clockd, the
 * daemon's (all threads, /proc/PID/task/[*]/schedstat), per expiry
 * offered (the periods elapsed over the phase: an expiry folded into an
 * overrun counts as delivered, as a timerfd's count does). The daemon's
 * own cost with no timer (its tick: HZ wake-ups a second whatever the
 * timers) is measured before each repetition and shown apart: "clockd
 * beyond it" is what the timers add; the summary gives the tick alone
 * per expiry as a ratio to a timerfd, the part of clockd/timerfd that no
 * timer work can remove while the daemon ticks at HZ. Each phase starts
 * 1 s after the first expiry when the timers offer more than 50 000
 * expiries a second, so that a budget past which the daemon folds
 * expiries into overruns is measured in its steady state, not in its
 * first turn.
 *
 * usage: bench-expiry DAEMON_PID [-r REPS] [-s SECONDS] [-n N,N,...] [-p MS,MS,...]
 * Prints a line per configuration and repetition, then the median ratio
 * clockd/timerfd and clockd/posix of each configuration over the
 * repetitions where the kernel's sides got 90% of their expiries or more
 * (others are disturbed: real-time work of other programs held them off). Exit status 0
 * whether or not the targets (<= 1.0x timerfd for 1 and 100 timers, <= 2x
 * for 10 000) are met: the figures are the output.
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <clockd/clockd.h>

#define NS 1000000000LL
#define MAX_TIMERS 10001
#define MAX_REPS 20
#define MAX_CONF 16

static pid_t daemon_pid;
static double phase_s = 1.0;
static volatile int stop_flag;
static unsigned long long counted; /* expiries counted by the side running */

static int64_t mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * NS + ts.tv_nsec;
}

static int64_t task_cpu_ns(pid_t pid)
{
	char path[300], buf[128];
	int64_t sum = 0;
	struct dirent *e;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	while (d && (e = readdir(d))) {
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/schedstat", (int)pid, e->d_name);
		f = fopen(path, "r");
		if (f && fgets(buf, sizeof(buf), f))
			sum += strtoll(buf, NULL, 10);
		if (f)
			fclose(f);
	}
	if (d)
		closedir(d);
	return sum;
}

static void pin0(void)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

/* The first expiry, all due together once all are armed: 20 ms from now,
 * and 50 us more a timer to arm. */
static int64_t lead_in(int n)
{
	return 20000000 + (int64_t)n * 50000;
}

static struct itimerspec first_at(int n, int64_t period_ns, int64_t *start)
{
	struct itimerspec its;

	*start = mono() + lead_in(n);
	its.it_value.tv_sec = *start / NS;
	its.it_value.tv_nsec = *start % NS;
	its.it_interval.tv_sec = period_ns / NS;
	its.it_interval.tv_nsec = period_ns % NS;
	return its;
}

/* ---- timerfd ---- */

static int tfd[MAX_TIMERS];

static void *tfd_thread(void *arg)
{
	int ep = *(int *)arg;
	struct epoll_event ev[256];
	uint64_t v;

	pin0();
	while (!stop_flag) {
		int n = epoll_wait(ep, ev, 256, 50);

		for (int i = 0; i < n; i++)
			if (read(tfd[ev[i].data.u32], &v, sizeof(v)) == (ssize_t)sizeof(v))
				__atomic_fetch_add(&counted, v, __ATOMIC_RELAXED);
	}
	return NULL;
}

/* ---- relay: timerfds in another process, one eventfd write a wake-up ---- */

static pid_t relay_pid;
static int relay_efd = -1;

static void relay_child(int n, const struct itimerspec *its)
{
	struct epoll_event ev[256];
	int ep = epoll_create1(0);
	uint64_t v, sum;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	pin0();
	for (int i = 0; i < n; i++) {
		struct epoll_event e = { .events = EPOLLIN, .data.u32 = (uint32_t)i };

		tfd[i] = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
		if (tfd[i] < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, tfd[i], &e) < 0 ||
		    timerfd_settime(tfd[i], TFD_TIMER_ABSTIME, its, NULL) < 0)
			_exit(1);
	}
	for (;;) {
		int k = epoll_wait(ep, ev, 256, -1);

		sum = 0;
		for (int i = 0; i < k; i++)
			if (read(tfd[ev[i].data.u32], &v, sizeof(v)) == (ssize_t)sizeof(v))
				sum += v;
		if (sum && write(relay_efd, &sum, sizeof(sum)) < 0)
			_exit(1);
	}
}

static void *relay_thread(void *arg)
{
	uint64_t v;

	(void)arg;
	pin0();
	while (!stop_flag)
		if (read(relay_efd, &v, sizeof(v)) == (ssize_t)sizeof(v))
			__atomic_fetch_add(&counted, v, __ATOMIC_RELAXED);
	return NULL;
}

/* ---- POSIX timers ---- */

static timer_t ptim[MAX_TIMERS];
static pid_t posix_tid;
static volatile int posix_ready;

static void *posix_thread(void *arg)
{
	sigset_t set;
	siginfo_t si;
	struct timespec to = { 0, 50000000 };

	(void)arg;
	pin0();
	sigemptyset(&set);
	sigaddset(&set, SIGRTMIN);
	posix_tid = (pid_t)syscall(SYS_gettid);
	posix_ready = 1;
	while (!stop_flag)
		if (sigtimedwait(&set, &si, &to) > 0)
			__atomic_fetch_add(&counted, 1 + (unsigned long long)si.si_overrun, __ATOMIC_RELAXED);
	return NULL;
}

/* ---- clockd ---- */

static clockd_timer_t ctim[MAX_TIMERS];

static void clockd_fn(union sigval v)
{
	int o = clockd_timer_getoverrun(ctim[v.sival_int]);

	__atomic_fetch_add(&counted, 1 + (unsigned long long)(o > 0 ? o : 0), __ATOMIC_RELAXED);
}

/* The daemon's CPU with no timer of ours, ns per second (its tick). */
static double daemon_idle_rate(void)
{
	int64_t d0 = task_cpu_ns(daemon_pid), t0 = mono(), d1, t1;

	usleep((useconds_t)(phase_s * 1e6));
	d1 = task_cpu_ns(daemon_pid);
	t1 = mono();
	return (double)(d1 - d0) * 1e9 / (double)(t1 - t0);
}

enum side { S_TIMERFD, S_POSIX, S_RELAY, S_CLOCKD, S_N };
static double idle_rate, clockd_marginal;
static const char *side_name[S_N] = { "timerfd", "posix", "relay", "clockd" };

/* One phase: CPU ns per expiry offered, and the share delivered (%). */
static double run_side(enum side sd, int n, int64_t period_ns, double *delivered)
{
	int64_t start = 0, c0, c1, d0 = 0, d1 = 0, t1, offered;
	struct itimerspec its;
	pthread_t th = 0;
	int ep = -1;

	stop_flag = 0;
	counted = 0;
	if (sd == S_TIMERFD) {
		ep = epoll_create1(0);
		its = first_at(n, period_ns, &start);
		for (int i = 0; i < n; i++) {
			struct epoll_event e = { .events = EPOLLIN, .data.u32 = (uint32_t)i };

			tfd[i] = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
			if (tfd[i] < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, tfd[i], &e) < 0 ||
			    timerfd_settime(tfd[i], TFD_TIMER_ABSTIME, &its, NULL) < 0) {
				perror("bench-expiry: timerfd");
				exit(1);
			}
		}
		pthread_create(&th, NULL, tfd_thread, &ep);
	} else if (sd == S_POSIX) {
		posix_ready = 0;
		pthread_create(&th, NULL, posix_thread, NULL);
		while (!posix_ready)
			usleep(1000);
		its = first_at(n, period_ns, &start);
		for (int i = 0; i < n; i++) {
			struct sigevent sev = { .sigev_notify = SIGEV_THREAD_ID, .sigev_signo = SIGRTMIN };

			sev._sigev_un._tid = posix_tid;
			if (timer_create(CLOCK_MONOTONIC, &sev, &ptim[i]) < 0 ||
			    timer_settime(ptim[i], TIMER_ABSTIME, &its, NULL) < 0) {
				perror("bench-expiry: timer_create");
				exit(1);
			}
		}
	} else if (sd == S_RELAY) {
		/* Blocking reads, woken at the end by a last write. */
		relay_efd = eventfd(0, EFD_CLOEXEC);
		its = first_at(n, period_ns, &start);
		relay_pid = fork();
		if (relay_efd < 0 || relay_pid < 0) {
			perror("bench-expiry: relay");
			exit(1);
		}
		if (relay_pid == 0)
			relay_child(n, &its);
		pthread_create(&th, NULL, relay_thread, NULL);
	} else {
		struct timespec now;

		clockd_clock_gettime(CLOCKD_MONOTONIC, &now);
		{
			int64_t at = (int64_t)now.tv_sec * NS + now.tv_nsec + lead_in(n);

			its.it_value.tv_sec = at / NS;
			its.it_value.tv_nsec = at % NS;
		}
		its.it_interval.tv_sec = period_ns / NS;
		its.it_interval.tv_nsec = period_ns % NS;
		start = mono() + lead_in(n);
		for (int i = 0; i < n; i++) {
			struct clockd_sigevent sev = { .notify = CLOCKD_SIGEV_THREAD_CPU, .cpu = 0, .fn = clockd_fn,
						       .value.sival_int = i };

			if (clockd_timer_create(CLOCKD_MONOTONIC, &sev, &ctim[i]) < 0 ||
			    clockd_timer_settime(ctim[i], TIMER_ABSTIME, &its, NULL) < 0) {
				perror("bench-expiry: clockd_timer_create");
				exit(1);
			}
		}
	}
	/* Measure from the first expiry for phase_s (past a budget's first
	 * turn). */
	if ((double)n * 1e9 / (double)period_ns > 50000)
		start += NS;
	while (mono() < start)
		usleep(1000);
	counted = 0;
	c0 = task_cpu_ns(getpid());
	if (sd == S_CLOCKD)
		d0 = task_cpu_ns(daemon_pid);
	else if (sd == S_RELAY)
		d0 = task_cpu_ns(relay_pid);
	start = mono();
	usleep((useconds_t)(phase_s * 1e6));
	c1 = task_cpu_ns(getpid());
	if (sd == S_CLOCKD)
		d1 = task_cpu_ns(daemon_pid);
	else if (sd == S_RELAY)
		d1 = task_cpu_ns(relay_pid);
	t1 = mono();
	offered = (t1 - start) / period_ns * n;
	*delivered = offered ? 100.0 * (double)__atomic_load_n(&counted, __ATOMIC_RELAXED) / (double)offered : 0;
	stop_flag = 1;
	if (sd == S_TIMERFD) {
		pthread_join(th, NULL);
		for (int i = 0; i < n; i++)
			close(tfd[i]);
		close(ep);
	} else if (sd == S_POSIX) {
		for (int i = 0; i < n; i++)
			timer_delete(ptim[i]);
		pthread_join(th, NULL);
	} else if (sd == S_RELAY) {
		uint64_t one = 1;

		kill(relay_pid, SIGKILL);
		waitpid(relay_pid, NULL, 0);
		if (write(relay_efd, &one, sizeof(one)) < 0)
			perror("bench-expiry: relay");
		pthread_join(th, NULL);
		close(relay_efd);
	} else {
		for (int i = 0; i < n; i++)
			clockd_timer_delete(ctim[i]);
	}
	if (sd == S_CLOCKD && offered)
		clockd_marginal = ((double)((c1 - c0) + (d1 - d0)) - idle_rate * (double)(t1 - start) / 1e9) /
				  (double)offered;
	return offered ? (double)((c1 - c0) + (d1 - d0)) / (double)offered : 0;
}

static int cmpd(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int parse_list(const char *s, long *out, int max)
{
	int k = 0;
	char *end;

	while (s && *s && k < max) {
		out[k++] = strtol(s, &end, 10);
		if (end == s)
			break;
		s = *end == ',' ? end + 1 : end;
	}
	return k;
}

int main(int argc, char **argv)
{
	long ns[MAX_CONF] = { 1, 100, 10000 }, ps[MAX_CONF] = { 1, 10 };
	int nn = 3, np = 2, reps = 5, c;
	/* clockd/timerfd, clockd/posix, relay/timerfd, clockd/relay, and the
	 * daemon's tick alone (its idle CPU) per expiry against a timerfd */
	double ratio[5][MAX_REPS];
	sigset_t set;

	if (argc < 2) {
		fprintf(stderr, "usage: bench-expiry DAEMON_PID [-r REPS] [-s SECONDS] [-n N,..] [-p MS,..]\n");
		return 2;
	}
	daemon_pid = (pid_t)atol(argv[1]);
	optind = 2;
	while ((c = getopt(argc, argv, "r:s:n:p:")) != -1) {
		switch (c) {
		case 'r': reps = atoi(optarg); break;
		case 's': phase_s = atof(optarg); break;
		case 'n': nn = parse_list(optarg, ns, MAX_CONF); break;
		case 'p': np = parse_list(optarg, ps, MAX_CONF); break;
		default: return 2;
		}
	}
	if (reps < 1 || reps > MAX_REPS || phase_s <= 0)
		return 2;
	/* The POSIX side's signal is taken by sigtimedwait only. */
	sigemptyset(&set);
	sigaddset(&set, SIGRTMIN);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	for (int pi = 0; pi < np; pi++) {
		for (int ni = 0; ni < nn; ni++) {
			int n = (int)ns[ni];
			int64_t period = ps[pi] * 1000000LL;

			if (n < 1 || n > MAX_TIMERS - 1)
				continue;
			int nv = 0;

			for (int r = 0; r < reps; r++) {
				double cpu[S_N], del[S_N];
				bool disturbed;

				idle_rate = daemon_idle_rate();
				/* Each repetition starts with another side. */
				for (int k = 0; k < S_N; k++) {
					int sd = (k + r) % S_N;

					cpu[sd] = run_side((enum side)sd, n, period, &del[sd]);
				}
				/* A side that got under 90% of its expiries did not
				 * run (a machine busy with real-time work): no ratio. */
				disturbed = del[S_TIMERFD] < 90 || del[S_POSIX] < 90 || del[S_RELAY] < 90;
				ratio[0][nv] = cpu[S_TIMERFD] > 0 ? cpu[S_CLOCKD] / cpu[S_TIMERFD] : 0;
				ratio[1][nv] = cpu[S_POSIX] > 0 ? cpu[S_CLOCKD] / cpu[S_POSIX] : 0;
				ratio[2][nv] = cpu[S_TIMERFD] > 0 ? cpu[S_RELAY] / cpu[S_TIMERFD] : 0;
				ratio[3][nv] = cpu[S_RELAY] > 0 ? cpu[S_CLOCKD] / cpu[S_RELAY] : 0;
				ratio[4][nv] = cpu[S_TIMERFD] > 0 ?
						       idle_rate * (double)period / 1e9 / n / cpu[S_TIMERFD] : 0;
				printf("%5d timers @ %2ld ms rep %d: us/expiry", n, ps[pi], r + 1);
				for (int s = 0; s < S_N; s++)
					printf(" %s %.2f (%.0f%%)", side_name[s], cpu[s] / 1e3, del[s]);
				printf("  clockd/timerfd %.2fx clockd/posix %.2fx relay/timerfd %.2fx; daemon idle %.1f%% of a core, "
				       "clockd beyond it %.2f us (%.2fx timerfd)%s\n", ratio[0][nv], ratio[1][nv], ratio[2][nv],
				       idle_rate / 1e7, clockd_marginal / 1e3,
				       cpu[S_TIMERFD] > 0 ? clockd_marginal / cpu[S_TIMERFD] : 0,
				       disturbed ? " [disturbed: left out]" : "");
				if (!disturbed)
					nv++;
				fflush(stdout);
			}
			if (nv == 0) {
				printf("%5d timers @ %2ld ms: every repetition disturbed\n", n, ps[pi]);
				continue;
			}
			for (int k = 0; k < 5; k++)
				qsort(ratio[k], (size_t)nv, sizeof(double), cmpd);
			printf("%5d timers @ %2ld ms: median clockd/timerfd %.2fx (range %.2f-%.2f, %d repetitions, "
			       "target %s), clockd/posix %.2fx; floor relay/timerfd %.2fx, clockd/relay %.2fx; "
			       "the tick alone %.2fx timerfd\n",
			       n, ps[pi], ratio[0][nv / 2], ratio[0][0], ratio[0][nv - 1], nv,
			       n >= 10000 ? "<= 2x" : "<= 1.0x", ratio[1][nv / 2], ratio[2][nv / 2], ratio[3][nv / 2],
			       ratio[4][nv / 2]);
		}
	}
	return 0;
}
