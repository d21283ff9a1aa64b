/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Helper of preload.sh.
 *
 *   ptest now          print CLOCKD_REALTIME, CLOCKD_MONOTONIC (libclockd)
 *                      and the kernel's CLOCK_REALTIME, CLOCK_MONOTONIC,
 *                      as sec.nsec, one line
 *   ptest timer signal|thread PPM
 *                      run under libclockd-preload.so on a daemon whose
 *                      clock runs PPM fast (negative: slow): a plain
 *                      timer_create(CLOCK_MONOTONIC) with SIGEV_SIGNAL or
 *                      SIGEV_THREAD, armed 200 ms ahead, must expire on
 *                      clockd's clock, not the kernel's. Exit 0 if so,
 *                      else 1; one line of findings on stdout either way.
 *   ptest tidtimer PPM run under libclockd-preload.so on a daemon whose
 *                      clock runs PPM fast: a SIGEV_THREAD_ID timer (the
 *                      kernel's) armed TIMER_ABSTIME on the program's
 *                      CLOCK_REALTIME expires at that time of the
 *                      program's clock (give or take the rates), not of
 *                      the kernel's. Exit 0 if so; one line either way.
 *   ptest tai          print the program's CLOCK_TAI - CLOCK_REALTIME in ms
 *                      (the C library's calls: under the preload, clockd's
 *                      CLOCKD_TAI and CLOCKD_REALTIME), rounded
 *   ptest timed PROGRAM [ARG]...
 *                      run PROGRAM; print how long it took on
 *                      CLOCKD_MONOTONIC and on the kernel's CLOCK_MONOTONIC
 *                      (ns) and its exit status
 *
 * The kernel's clocks are read with the system call itself: neither the
 * preload library nor the vDSO is in the way.
 *
 * The daemon of these tests has no counter a client may read, so its
 * clocks move once a tick, and a read may be up to a tick behind the
 * clock, more if the tick thread was late. A start read is therefore
 * taken just after a tick landed (fresh_start), and the kernel-time
 * floors allow STALE_NS besides.
 */
#include <errno.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <clockd/clockd.h>

#define NSEC 1000000000LL
#define ARM_NS 200000000LL
#define WAIT_NS (10 * NSEC)
#define STALE_NS 10000000LL

static long long ts_ns(const struct timespec *ts)
{
	return (long long)ts->tv_sec * NSEC + ts->tv_nsec;
}

static long long kernel_ns(clockid_t id)
{
	struct timespec ts;

	if (syscall(SYS_clock_gettime, id, &ts) != 0)
		abort();
	return ts_ns(&ts);
}

static long long clockd_ns(clockid_t id)
{
	struct timespec ts;

	if (clockd_clock_gettime(id, &ts) != 0)
		return -1;
	return ts_ns(&ts);
}

/* CLOCKD_MONOTONIC and the kernel's CLOCK_MONOTONIC right after the
 * clockd clock moved (a tick landed), waiting 100 ms at most. */
static void fresh_start(long long *c, long long *k)
{
	long long first = clockd_ns(CLOCKD_MONOTONIC), end = kernel_ns(CLOCK_MONOTONIC) + NSEC / 10;

	do {
		*c = clockd_ns(CLOCKD_MONOTONIC);
		*k = kernel_ns(CLOCK_MONOTONIC);
	} while (*c == first && *k < end);
}

/* The least kernel time in which @ns of a clockd clock running @ppm fast
 * can pass, from a start read up to STALE_NS behind. */
static long long kernel_floor(long long ns, double ppm)
{
	return (long long)((double)(ns - STALE_NS) / (1.0 + ppm / 1e6));
}

static int cmd_timed(char **argv)
{
	long long c0, k0, c1, k1;
	int status;
	pid_t pid;

	fresh_start(&c0, &k0);
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		execvp(argv[0], argv);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) != pid)
		return 1;
	c1 = clockd_ns(CLOCKD_MONOTONIC);
	k1 = kernel_ns(CLOCK_MONOTONIC);
	printf("%lld %lld %d\n", c1 - c0, k1 - k0, WIFEXITED(status) ? WEXITSTATUS(status) : 128);
	return 0;
}

static int cmd_now(void)
{
	long long v[4] = { clockd_ns(CLOCKD_REALTIME), clockd_ns(CLOCKD_MONOTONIC),
			   kernel_ns(CLOCK_REALTIME), kernel_ns(CLOCK_MONOTONIC) };

	if (v[0] < 0 || v[1] < 0) {
		fprintf(stderr, "ptest: clockd_clock_gettime: %s\n", strerror(errno));
		return 1;
	}
	for (int i = 0; i < 4; i++)
		printf("%lld.%09lld%c", v[i] / NSEC, v[i] % NSEC, i < 3 ? ' ' : '\n');
	return 0;
}

/* The expiry, as seen where it is notified. */
static volatile sig_atomic_t fired;
static long long fire_clockd, fire_kernel;
static int fire_value;
static sem_t fire_sem;

static void note_fire(int value)
{
	fire_clockd = clockd_ns(CLOCKD_MONOTONIC);
	fire_kernel = kernel_ns(CLOCK_MONOTONIC);
	fire_value = value;
	fired = 1;
}

static void on_signal(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	note_fire(si->si_value.sival_int);
}

static void on_thread(union sigval v)
{
	note_fire(v.sival_int);
	sem_post(&fire_sem);
}

static int make_timer(const char *kind, timer_t *t)
{
	struct sigevent sev;
	struct sigaction sa;

	memset(&sev, 0, sizeof(sev));
	sev.sigev_value.sival_int = 42;
	if (strcmp(kind, "signal") == 0) {
		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = on_signal;
		sa.sa_flags = SA_SIGINFO;
		sigaction(SIGRTMIN, &sa, NULL);
		sev.sigev_notify = SIGEV_SIGNAL;
		sev.sigev_signo = SIGRTMIN;
	} else {
		sem_init(&fire_sem, 0, 0);
		sev.sigev_notify = SIGEV_THREAD;
		sev.sigev_notify_function = on_thread;
	}
	return timer_create(CLOCK_MONOTONIC, &sev, t);
}

/* Wait for the expiry, 10 s at most of the kernel's time (the program's
 * own clock is the one under test). */
static void wait_fire(void)
{
	long long end = kernel_ns(CLOCK_MONOTONIC) + WAIT_NS;
	struct timespec nap = { 0, 1000000 };

	while (!fired && kernel_ns(CLOCK_MONOTONIC) < end)
		syscall(SYS_nanosleep, &nap, NULL);
}

static int cmd_timer(const char *kind, double ppm)
{
	struct itimerspec its = { .it_value = { 0, ARM_NS } }, left;
	struct timespec mine;
	long long c0, k0, c_before, c_after, floor_ns;
	timer_t t;
	int ok = 1;

	if (make_timer(kind, &t) != 0) {
		printf("timer_create: %s\n", strerror(errno));
		return 1;
	}
	/* The program's CLOCK_MONOTONIC is clockd's. */
	c_before = clockd_ns(CLOCKD_MONOTONIC);
	clock_gettime(CLOCK_MONOTONIC, &mine);
	c_after = clockd_ns(CLOCKD_MONOTONIC);
	if (ts_ns(&mine) < c_before || ts_ns(&mine) > c_after) {
		printf("CLOCK_MONOTONIC %lld is not between clockd reads %lld and %lld; ", ts_ns(&mine),
		       c_before, c_after);
		ok = 0;
	}
	fresh_start(&c0, &k0);
	if (timer_settime(t, 0, &its, NULL) != 0) {
		printf("timer_settime: %s\n", strerror(errno));
		return 1;
	}
	if (timer_gettime(t, &left) != 0 || ts_ns(&left.it_value) <= 0 || ts_ns(&left.it_value) > ARM_NS) {
		printf("timer_gettime: %lld ns left of %lld; ", ts_ns(&left.it_value), ARM_NS);
		ok = 0;
	}
	wait_fire();
	if (!fired) {
		printf("no expiry within 10 s\n");
		return 1;
	}
	if (strcmp(kind, "thread") == 0)
		sem_wait(&fire_sem); /* the function has finished with its notes */
	/* Never early on clockd's clock; on the kernel's, at least the
	 * 200 ms at clockd's rate (a kernel timer would take 200). */
	floor_ns = kernel_floor(ARM_NS, ppm);
	printf("%s: clockd %.3f ms, kernel %.3f ms (at least %.3f), value %d, overrun %d", kind,
	       (fire_clockd - c0) / 1e6, (fire_kernel - k0) / 1e6, floor_ns / 1e6, fire_value,
	       timer_getoverrun(t));
	if (fire_clockd - c0 < ARM_NS || fire_kernel - k0 < floor_ns || fire_value != 42)
		ok = 0;
	if (timer_delete(t) != 0) {
		printf("; timer_delete: %s", strerror(errno));
		ok = 0;
	}
	printf("\n");
	return ok ? 0 : 1;
}

/*
 * A kernel timer that the preload library arms for a program on clockd
 * (SIGEV_THREAD_ID: libclockd cannot signal one thread): TIMER_ABSTIME on
 * CLOCK_REALTIME, 200 ms ahead of the program's realtime, which is
 * clockd's, 1000 s apart from the kernel's in preload.sh. The library
 * moves the expiry by that offset, so it must expire within 10 s. It runs
 * 200 ms of the kernel's time, which are 200 ms less PPM of clockd's: a
 * clock slower than the kernel's reads that much less than the target
 * (and up to a tick more, STALE_NS, for a read behind).
 */
static int cmd_tidtimer(double ppm)
{
	long long early = ppm < 0 ? (long long)(ARM_NS * -ppm / 1e6) + STALE_NS : 0;
	struct sigevent sev;
	struct itimerspec its;
	struct timespec now, wait = { 10, 0 };
	long long target;
	sigset_t set;
	timer_t t;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGRTMIN);
	sigprocmask(SIG_BLOCK, &set, NULL);
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIGRTMIN;
	sev._sigev_un._tid = (int)syscall(SYS_gettid);
	if (timer_create(CLOCK_REALTIME, &sev, &t) != 0) {
		printf("timer_create: %s\n", strerror(errno));
		return 1;
	}
	clock_gettime(CLOCK_REALTIME, &now);
	target = ts_ns(&now) + ARM_NS;
	memset(&its, 0, sizeof(its));
	its.it_value.tv_sec = (time_t)(target / NSEC);
	its.it_value.tv_nsec = (long)(target % NSEC);
	if (timer_settime(t, TIMER_ABSTIME, &its, NULL) != 0) {
		printf("timer_settime: %s\n", strerror(errno));
		return 1;
	}
	sig = sigtimedwait(&set, NULL, &wait);
	clock_gettime(CLOCK_REALTIME, &now);
	printf("%s at %+lld us of the program's realtime from the target (%lld us early at most)\n",
	       sig == SIGRTMIN ? "expired" : "did not expire", (ts_ns(&now) - target) / 1000, early / 1000);
	return sig == SIGRTMIN && ts_ns(&now) >= target - early ? 0 : 1;
}

static int cmd_tai(void)
{
	struct timespec r, t;

	if (clock_gettime(CLOCK_TAI, &t) != 0 || clock_gettime(CLOCK_REALTIME, &r) != 0) {
		perror("clock_gettime");
		return 1;
	}
	printf("%lld\n", (ts_ns(&t) - ts_ns(&r) + 500000) / 1000000);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "now") == 0)
		return cmd_now();
	if (argc == 2 && strcmp(argv[1], "tai") == 0)
		return cmd_tai();
	if (argc == 4 && strcmp(argv[1], "timer") == 0 &&
	    (strcmp(argv[2], "signal") == 0 || strcmp(argv[2], "thread") == 0))
		return cmd_timer(argv[2], atof(argv[3]));
	if (argc == 3 && strcmp(argv[1], "tidtimer") == 0)
		return cmd_tidtimer(atof(argv[2]));
	if (argc >= 3 && strcmp(argv[1], "timed") == 0)
		return cmd_timed(argv + 2);
	fprintf(stderr, "usage: ptest now | ptest timer signal|thread PPM | ptest timed PROGRAM [ARG]...\n");
	return 2;
}
