/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Flood and quotas (issue #8, part 3). A well-behaved client times a 1 ms
 * periodic timer delivered on CPU @cpu, quiet and while four attackers,
 * each a process of its own, try to swamp the daemon:
 *
 *   timers   arms and re-arms timers on the same CPU as fast as libclockd
 *            goes, over more timer ids than its quota (client_max_timers)
 *   connect  opens connections without end, each saying HELLO (so each
 *            costs the daemon its rings), and holds them
 *   garbage  connects, sends a random datagram, and again
 *   msgs     sends CPU_STATS requests far beyond its message quota
 *            (client_max_msgs_per_sec), reading the replies
 *
 * The phases are quiet, flood, quiet, flood, ..., nphases of PHASE
 * expiries, so the quiet and the flooded lateness are measured side by
 * side in one run (short phases: a burst of load from elsewhere on the
 * machine falls on both kinds). The daemon's resident memory (VmRSS,
 * VmHWM of /proc/PID/status) is read before and after each flood.
 *
 * usage: flood [--bench] DAEMON_PID CPU HOLD
 * HOLD: how many connections the connection flooder holds; a few below
 * max_clients leaves room for the other attackers to get in (and beyond
 * it the flooder is refused).
 * With --bench the well-behaved client runs SCHED_FIFO (the daemon's
 * bases should too: timer_priority), the attackers SCHED_OTHER: what is
 * measured is the daemon keeping one client from another, not the
 * kernel's scheduler sharing 2 CPUs among 6 busy processes.
 * Without --bench it is a test (TAP): every expiry came and none early;
 * the timer flooder got EAGAIN beyond its quota and was served within it;
 * the connection flooder was refused (EDQUOT) beyond max_clients; every
 * garbage datagram got its connection closed; the message flooder got
 * EAGAIN and was disconnected; the daemon's memory did not grow from one
 * flood to the next. The lateness figures are printed, not judged (speed
 * is for benchmarks); with --bench they and their ratios are the output.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <clockd/clockd.h>
#include "shared/ctlproto.h"
#include "tests/ctlraw.h"

#define PERIOD_NS 1000000LL
#define PHASE 1500          /* expiries per phase */
#define NPHASES_MAX 16      /* quiet, flood, quiet, flood, ... */
/* Phases of this run: 8 as a test, 16 for the benchmark (a p99 of 12000
 * expiries a side is steadier than one of 6000). */
static int nphases = 8;
#define NS 1000000000LL
#define TIMER_IDS 70000     /* the timer flooder's ids: beyond any quota here */
#define HOLD_MAX 4096       /* connections the connection flooder can hold */
#define PAUSE_US 20000      /* the attackers' nap while paused: rare enough
			     * not to disturb the quiet phases */

enum { A_TIMERS, A_CONNECT, A_GARBAGE, A_MSGS, NATTACKERS };
static const char *const attacker_name[NATTACKERS] = { "timers", "connect", "garbage", "msgs" };

/* Shared with the attackers (MAP_SHARED before fork). */
struct board {
	int go;   /* 1: attack; 0: pause (let go of what is held); -1: exit */
	struct {
		uint64_t ok, edquot, eagain, other_err; /* replies and errors */
		uint64_t closed;                        /* connections the daemon closed */
		uint64_t rounds;
		uint64_t no_connect;                    /* connect() failed */
	} a[NATTACKERS];
};

static struct board *board;
static const char *sock_path;
static unsigned target_cpu, hold;

static int go(void) { return __atomic_load_n(&board->go, __ATOMIC_ACQUIRE); }
static void count(uint64_t *c) { __atomic_fetch_add(c, 1, __ATOMIC_RELAXED); }

/* CLOCKD_MONOTONIC, or -1 if the read failed (errno). */
static int64_t clk(void)
{
	struct timespec ts;

	if (clockd_clock_gettime(CLOCKD_MONOTONIC, &ts) < 0)
		return -1;
	return (int64_t)ts.tv_sec * NS + ts.tv_nsec;
}

/* ---- the raw protocol, for the attackers that do not use libclockd ---- */

static int conn_open(void)
{
	return ctlraw_connect(sock_path);
}

static int send_req(int fd, uint16_t type, uint32_t seq, int flags)
{
	struct ctl_msg m;

	ctl_msg_init(&m, type, seq);
	if (type == CTL_HELLO) {
		m.u.hello.min_version = 1;
		m.u.hello.max_version = 1;
	}
	return ctlraw_send(fd, &m, flags);
}

/* One reply, its descriptors closed: its type and, for ERROR, *err; 0 at
 * end of file, -1 if none came within @ms (@ms 0: none was there). */
static int recv_reply(int fd, int ms, uint16_t *type, int *err)
{
	struct ctl_msg m;
	int r = ctlraw_recv(fd, ms, &m, NULL, NULL);

	if (r == 1) {
		*type = m.type;
		*err = m.type == CTL_ERROR ? m.u.error.errno_code : 0;
	}
	return r;
}

/* Count a reply: OK-like, EDQUOT, EAGAIN or another error. */
static void tally(int who, uint16_t type, int err)
{
	if (type != CTL_ERROR)
		count(&board->a[who].ok);
	else if (err == EDQUOT)
		count(&board->a[who].edquot);
	else if (err == EAGAIN)
		count(&board->a[who].eagain);
	else
		count(&board->a[who].other_err);
}

/* ---- the attackers ---- */

static void nothing(struct clockd_timer *t, void *arg)
{
	(void)t;
	(void)arg;
}

/* Arms on more ids than the quota, then re-arms them, on @target_cpu, a
 * few jiffies ahead (so many fire and are delivered too). The ids: up to
 * the first EAGAIN (its quota), and a sixteenth more, so that most calls reach the
 * daemon. */
static void attack_timers(void)
{
	static struct clockd_timer t[TIMER_IDS];
	static bool armed[TIMER_IDS];
	uint64_t i = 0, nids = TIMER_IDS;
	int g;

	for (unsigned k = 0; k < TIMER_IDS; k++)
		clockd_timer_setup(&t[k], nothing, NULL);
	/* Connected before the flood, as a client that has been running is
	 * (not shut out by the connection flooder). */
	if (clockd_add_timer_on(&t[0], clockd_get_jiffies_64() + 1000000, target_cpu) == 0)
		clockd_del_timer(&t[0]);
	while ((g = go()) >= 0) {
		if (g == 0) {
			usleep(PAUSE_US);
			continue;
		}
		for (unsigned k = 0; k < 256; k++, i++) {
			unsigned id = (unsigned)(i % nids);
			uint64_t exp = clockd_get_jiffies_64() + 1 + (i & 63);
			int r = armed[id] ? clockd_mod_timer(&t[id], exp) : clockd_add_timer_on(&t[id], exp, target_cpu);

			if (r >= 0) {
				armed[id] = true;
				count(&board->a[A_TIMERS].ok);
			} else if (errno == EAGAIN) {
				/* Its quota (since issue #26: EAGAIN, the
				 * library no longer says EDQUOT), counted in
				 * the edquot column. */
				count(&board->a[A_TIMERS].edquot);
				if (nids == TIMER_IDS)
					nids = id + id / 16 + 1;
			} else {
				count(&board->a[A_TIMERS].other_err);
			}
		}
		count(&board->a[A_TIMERS].rounds);
	}
}

/* Connects and says HELLO without end, holding up to @hold of what the
 * daemon accepts (closing the rest at once), letting all go at a pause.
 * Beyond max_clients the daemon refuses it. */
static void attack_connect(void)
{
	int held[HOLD_MAX], nheld = 0, g;
	uint16_t type;
	int err, r;

	while ((g = go()) >= 0) {
		if (g == 0) {
			while (nheld > 0)
				close(held[--nheld]);
			usleep(PAUSE_US);
			continue;
		}
		int fd = conn_open();

		if (fd < 0) {
			count(&board->a[A_CONNECT].no_connect);
			continue;
		}
		count(&board->a[A_CONNECT].rounds);
		if (send_req(fd, CTL_HELLO, 1, 0) < 0) {
			count(&board->a[A_CONNECT].closed);
			close(fd);
			continue;
		}
		r = recv_reply(fd, 2000, &type, &err);
		if (r == 1)
			tally(A_CONNECT, type, err);
		if (r == 1 && type == CTL_HELLO_ACK) {
			if (nheld < (int)hold && nheld < HOLD_MAX)
				held[nheld++] = fd;
			else
				close(fd);
			continue;
		}
		/* Refused: the daemon closes it after the ERROR. */
		if (r == 1 && recv_reply(fd, 2000, &type, &err) == 0)
			count(&board->a[A_CONNECT].closed);
		close(fd);
	}
	while (nheld > 0)
		close(held[--nheld]);
}

/* Random datagrams, one per connection: each must get an ERROR (EPROTO,
 * or EDQUOT beyond max_clients) and then a closed connection. */
static void attack_garbage(void)
{
	uint64_t x = 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid();
	unsigned char buf[CTL_MSG_MAX];
	uint16_t type;
	int err, g;

	while ((g = go()) >= 0) {
		if (g == 0) {
			usleep(PAUSE_US);
			continue;
		}
		int fd = conn_open();
		size_t len;

		if (fd < 0) {
			count(&board->a[A_GARBAGE].no_connect);
			continue;
		}
		for (size_t k = 0; k < sizeof(buf); k++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			buf[k] = (unsigned char)x;
		}
		len = 1 + (size_t)(x % sizeof(buf));
		count(&board->a[A_GARBAGE].rounds);
		/* The send may fail: refused beyond max_clients, the
		 * connection may be closed already, its ERROR waiting. */
		(void)send(fd, buf, len, MSG_NOSIGNAL);
		if (recv_reply(fd, 2000, &type, &err) == 1) {
			tally(A_GARBAGE, type, err);
			if (recv_reply(fd, 2000, &type, &err) == 0)
				count(&board->a[A_GARBAGE].closed);
		}
		close(fd);
	}
}

/* CPU_STATS requests, 64 at a time without waiting, then the replies that
 * came: far beyond the quota until the daemon hangs up, then again. */
static void attack_msgs(void)
{
	uint32_t seq = 0;
	uint16_t type;
	int fd = -1, err, r, g;

	while ((g = go()) >= 0) {
		if (g == 0) {
			if (fd >= 0)
				close(fd);
			fd = -1;
			usleep(PAUSE_US);
			continue;
		}
		if (fd < 0 && (fd = conn_open()) < 0) {
			count(&board->a[A_MSGS].no_connect);
			continue;
		}
		count(&board->a[A_MSGS].rounds);
		for (int k = 0; k < 64; k++)
			if (send_req(fd, CTL_CPU_STATS, ++seq, MSG_DONTWAIT) < 0)
				break;
		while ((r = recv_reply(fd, 0, &type, &err)) == 1)
			tally(A_MSGS, type, err);
		if (r == 0) {
			count(&board->a[A_MSGS].closed);
			close(fd);
			fd = -1;
		}
	}
	if (fd >= 0)
		close(fd);
}

static void (*const attack[NATTACKERS])(void) = { attack_timers, attack_connect, attack_garbage, attack_msgs };

/* ---- the well-behaved client ---- */

static int64_t late[NPHASES_MAX][PHASE];
static volatile int phase_n[NPHASES_MAX];
static int phase; /* atomic: read by the delivery thread */
static int64_t first, seen, early, read_errors;
static int read_errno;
static clockd_timer_t ptimer;

static void on_fire(union sigval v)
{
	int64_t now = clk(), l;
	int p;

	(void)v;
	seen += 1 + clockd_timer_getoverrun(ptimer);
	if (now < 0) {
		read_errno = errno;
		read_errors++;
		return;
	}
	l = now - (first + (seen - 1) * PERIOD_NS);
	if (l < 0)
		early++;
	p = __atomic_load_n(&phase, __ATOMIC_ACQUIRE);
	if (p < nphases && phase_n[p] < PHASE)
		late[p][phase_n[p]++] = l;
}

static int cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* Percentile @p of the phases of a kind (0: quiet, 1: flood). */
static int64_t pct(int kind, double p)
{
	static int64_t v[2][NPHASES_MAX / 2 * PHASE];
	static bool sorted[2];

	if (!sorted[kind]) {
		for (int i = 0; i < nphases / 2; i++)
			memcpy(v[kind] + i * PHASE, late[kind + 2 * i], sizeof(late[0]));
		qsort(v[kind], (size_t)(nphases / 2 * PHASE), sizeof(int64_t), cmp);
		sorted[kind] = true;
	}
	return v[kind][(int)(p * (nphases / 2 * PHASE - 1))];
}

/* VmRSS or VmHWM of @pid, kB (-1 if unreadable). */
static long vm_kb(pid_t pid, const char *key)
{
	char path[64], line[128];
	long kb = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%ld/status", (long)pid);
	if (!(f = fopen(path, "r")))
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, key, strlen(key)) == 0 && line[strlen(key)] == ':')
			kb = strtol(line + strlen(key) + 1, NULL, 10);
	fclose(f);
	return kb;
}

static int tap_n, tap_failed;

static void ok(bool cond, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void ok(bool cond, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d - ", cond ? "" : "not ", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	tap_failed |= !cond;
}

static void run_phase(int p)
{
	__atomic_store_n(&phase, p, __ATOMIC_RELEASE);
	while (phase_n[p] < PHASE)
		usleep(10000);
}

static pid_t start_attacker(int who)
{
	pid_t pid = fork();

	if (pid == 0) {
		struct sigaction sa = { .sa_handler = SIG_DFL };

		sigaction(SIGINT, &sa, NULL);
		attack[who]();
		_exit(0);
	}
	return pid;
}

static void print_table(bool bench)
{
	static const double ps[] = { 0.5, 0.99, 0.999, 1.0 };
	static const char *const pn[] = { "p50", "p99", "p99.9", "max" };
	const char *pre = bench ? "  " : "# ";

	printf("%slateness of a 1 ms periodic timer on CPU %u, %d expiries each (us):\n", pre, target_cpu,
	       nphases / 2 * PHASE);
	printf("%s  %-6s %10s %10s %8s\n", pre, "", "quiet", "flooded", "ratio");
	for (int i = 0; i < 4; i++) {
		int64_t q = pct(0, ps[i]), f = pct(1, ps[i]);

		printf("%s  %-6s %10.1f %10.1f %8.2f\n", pre, pn[i], q / 1e3, f / 1e3, q > 0 ? (double)f / (double)q : 0);
	}
	if (bench)
		printf("  target p99 flooded <= 1.5x quiet: %s\n",
		       pct(1, 0.99) <= pct(0, 0.99) * 3 / 2 ? "met" : "MISSED");
}

int main(int argc, char **argv)
{
	struct clockd_sigevent sev = { .notify = CLOCKD_SIGEV_THREAD_CPU, .fn = on_fire };
	struct itimerspec its = { .it_interval = { 0, PERIOD_NS } };
	bool bench = argc > 1 && strcmp(argv[1], "--bench") == 0;
	pid_t daemon, kids[NATTACKERS];
	long rss0, rss[2], hwm;
	int argi = bench ? 2 : 1;

	if (bench)
		nphases = NPHASES_MAX;

	if (argc != argi + 3) {
		fprintf(stderr, "usage: flood [--bench] DAEMON_PID CPU HOLD\n");
		return 2;
	}
	daemon = (pid_t)atol(argv[argi]);
	target_cpu = (unsigned)atoi(argv[argi + 1]);
	hold = (unsigned)atoi(argv[argi + 2]);
	sock_path = getenv("CLOCKD_SOCKET");
	if (!sock_path || vm_kb(daemon, "VmRSS") < 0) {
		fprintf(stderr, "flood: set CLOCKD_SOCKET, and give the pid of a running daemon\n");
		return 2;
	}
	board = mmap(NULL, sizeof(*board), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (board == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	/* The attackers first: a fork after libclockd connected would share
	 * its connection. */
	for (int k = 0; k < NATTACKERS; k++)
		kids[k] = start_attacker(k);
	if (bench) {
		struct sched_param sp = { .sched_priority = 50 };

		if (sched_setscheduler(0, SCHED_FIFO, &sp) < 0)
			perror("flood: SCHED_FIFO (the figures are for SCHED_OTHER)");
	}
	sev.cpu = (int)target_cpu;
	if (clockd_timer_create(CLOCKD_MONOTONIC, &sev, &ptimer) < 0) {
		perror("clockd_timer_create");
		board->go = -1;
		return 1;
	}
	first = clk() + 10 * PERIOD_NS;
	its.it_value.tv_sec = first / NS;
	its.it_value.tv_nsec = first % NS;
	if (clockd_timer_settime(ptimer, TIMER_ABSTIME, &its, NULL) < 0) {
		perror("clockd_timer_settime");
		board->go = -1;
		return 1;
	}
	rss0 = vm_kb(daemon, "VmRSS");
	for (int p = 0; p < nphases; p++) {
		__atomic_store_n(&board->go, p % 2, __ATOMIC_RELEASE);
		if (p % 2)
			usleep(300000); /* the flood under way */
		run_phase(p);
		/* After the first flood, and after the last. */
		if (p == 1 || p == nphases - 1)
			rss[p / (nphases - 1)] = vm_kb(daemon, "VmRSS");
	}
	__atomic_store_n(&phase, nphases, __ATOMIC_RELEASE);
	hwm = vm_kb(daemon, "VmHWM");
	__atomic_store_n(&board->go, -1, __ATOMIC_RELEASE);
	for (int k = 0; k < NATTACKERS; k++)
		waitpid(kids[k], NULL, 0);
	clockd_timer_delete(ptimer);

	print_table(bench);
	printf("%sdaemon memory: VmRSS %ld kB before, %ld kB after the first flood, %ld kB after the last; "
	       "peak (VmHWM) %ld kB\n", bench ? "  " : "# ", rss0, rss[0], rss[1], hwm);
	for (int k = 0; k < NATTACKERS; k++)
		printf("%sattacker %-8s %8llu rounds: %llu served, %llu EDQUOT, %llu EAGAIN, %llu other errors, "
		       "%llu closed by the daemon, %llu connects failed\n", bench ? "  " : "# ", attacker_name[k],
		       (unsigned long long)board->a[k].rounds, (unsigned long long)board->a[k].ok,
		       (unsigned long long)board->a[k].edquot, (unsigned long long)board->a[k].eagain,
		       (unsigned long long)board->a[k].other_err, (unsigned long long)board->a[k].closed,
		       (unsigned long long)board->a[k].no_connect);
	if (bench)
		return 0;

	int got = 0;

	for (int p = 0; p < nphases; p++)
		got += phase_n[p];
	ok(got == nphases * PHASE && early == 0,
	   "the well-behaved client's timer: every expiry came, none early (%lld early)", (long long)early);
	ok(read_errors == 0, "the well-behaved client's clock reads all succeeded (%lld failed%s%s)",
	   (long long)read_errors, read_errors ? ": " : "", read_errors ? strerror(read_errno) : "");
	ok(board->a[A_TIMERS].ok > 0 && board->a[A_TIMERS].edquot > 0,
	   "timer flooder: served within its quota, EAGAIN beyond it");
	ok(board->a[A_CONNECT].ok > 0 && board->a[A_CONNECT].edquot > 0 &&
		   board->a[A_CONNECT].closed >= board->a[A_CONNECT].edquot,
	   "connection flooder: served up to max_clients, then EDQUOT and closed");
	ok(board->a[A_GARBAGE].rounds > 0 && board->a[A_GARBAGE].ok == 0 &&
		   board->a[A_GARBAGE].edquot + board->a[A_GARBAGE].other_err == board->a[A_GARBAGE].rounds &&
		   board->a[A_GARBAGE].closed == board->a[A_GARBAGE].rounds,
	   "garbage sender: every datagram got an ERROR and a closed connection");
	ok(board->a[A_MSGS].eagain > 0 && board->a[A_MSGS].closed > 0,
	   "message flooder: EAGAIN beyond its quota, and disconnected");
	/* The second flood is the first again: what the daemon holds for it
	 * must not grow (a leak of rings, connections or slots would). */
	ok(rss[1] >= 0 && rss[1] <= rss[0] + 2048,
	   "the daemon's memory does not grow from the first flood to the last (%ld kB, then %ld kB)", rss[0], rss[1]);
	printf("1..%d\n", tap_n);
	return tap_failed;
}
