/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The per-CPU timer bases (timerbase.h): the threads, their loop, the
 * command queue, the tick hand-off and the statistics. A client's timers
 * are in timer.c, its records out in deliver.c, its memory in shm.c.
 *
 * A base thread sleeps in epoll_wait on: its wake eventfd (commands, the
 * tick, clock_was_set, stop), its timerfd (the earliest ns deadline) and
 * each client's submission eventfd. Every wake-up runs one round: commands,
 * backlogs, submissions, jiffies expiry, ns expiry, delivery wake-ups, then
 * the next deadlines. It polls instead of sleeping while work remains (a
 * submission budget ran out) and every millisecond while a backlog waits
 * (a client popping its delivery ring does not wake us).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "clockd/rtsched.h"
#include "clockd/timers/internal.h"
#include "clockd/timers/wakelead.h"
#include "shared/log.h"
#include "shared/tickmath.h"

#define EV_WAKE 0u   /* epoll data of the wake eventfd */
#define EV_TIMER 1u  /* of the timerfd; anything else is a struct tb_cc * */
#define MAX_EVENTS 64

static void efd_write(int fd)
{
	uint64_t one = 1;

	if (write(fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		log_warn("timer base: eventfd write");
}

static void fd_drain(int fd)
{
	uint64_t v;

	if (read(fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		log_warn("timer base: read");
}

/* ---- command queue ---- */

static void cmd_send(struct tb_base *b, struct tb_cmd *cmd)
{
	cmd->next = NULL;
	pthread_mutex_lock(&b->lock);
	*b->cmd_tail = cmd;
	b->cmd_tail = &cmd->next;
	pthread_mutex_unlock(&b->lock);
	efd_write(b->wake_efd);
}

int tb_cmd_call(struct tb_base *b, struct tb_cmd *cmd)
{
	cmd->wait = true;
	cmd->done = false;
	cmd->result = 0;
	cmd_send(b, cmd);
	pthread_mutex_lock(&b->lock);
	while (!cmd->done)
		pthread_cond_wait(&b->cond, &b->lock);
	pthread_mutex_unlock(&b->lock);
	return cmd->result;
}

void tb_cmd_post(struct tb_base *b, struct tb_cmd *cmd)
{
	cmd->wait = false;
	cmd_send(b, cmd);
}

static int cc_attach(struct tb_base *b, struct tb_cc *cc)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = cc };

	if (epoll_ctl(b->epfd, EPOLL_CTL_ADD, cc->sub_efd, &ev) < 0)
		return -errno;
	cc->registered = true;
	cc->next = b->clients;
	b->clients = cc;
	tb_stat_add(&b->st.clients, 1);
	return 0;
}

static void cc_unregister(struct tb_base *b, struct tb_cc *cc)
{
	if (cc->registered && epoll_ctl(b->epfd, EPOLL_CTL_DEL, cc->sub_efd, NULL) < 0)
		log_warn("timer base %u: epoll_ctl DEL", b->cpu);
	cc->registered = false;
}

static void cc_detach(struct tb_base *b, struct tb_cc *cc)
{
	struct tb_cc **pp;

	tb_cc_clear(cc);
	cc_unregister(b, cc);
	for (pp = &b->clients; *pp; pp = &(*pp)->next) {
		if (*pp == cc) {
			*pp = cc->next;
			tb_stat_add(&b->st.clients, (uint64_t)-1);
			break;
		}
	}
}

static void cmd_run(struct tb_base *b, struct tb_cmd *cmd)
{
	switch (cmd->type) {
	case TB_CMD_ADD:
		cmd->result = cc_attach(b, cmd->cc);
		break;
	case TB_CMD_DEL:
		cc_detach(b, cmd->cc);
		break;
	case TB_CMD_ARM:
	case TB_CMD_CANCEL:
		tb_cc_submit(cmd->cc, &cmd->rec);
		break;
	}
}

static void run_commands(struct tb_base *b)
{
	struct tb_cmd *cmd, *next;

	pthread_mutex_lock(&b->lock);
	cmd = b->cmd_head;
	b->cmd_head = NULL;
	b->cmd_tail = &b->cmd_head;
	pthread_mutex_unlock(&b->lock);
	for (; cmd; cmd = next) {
		next = cmd->next;
		cmd_run(b, cmd);
		if (!cmd->wait) {
			free(cmd);
			continue;
		}
		/* The sender frees (or reuses) cmd once done is seen. */
		pthread_mutex_lock(&b->lock);
		cmd->done = true;
		pthread_cond_broadcast(&b->cond);
		pthread_mutex_unlock(&b->lock);
	}
}

/* ---- one round ---- */

static void arm_timerfd(struct tb_base *b, uint64_t kns)
{
	struct itimerspec its = { { 0, 0 }, { 0, 0 } };

	if (kns == b->armed_kns)
		return;
	if (kns != UINT64_MAX) {
		/* 0 disarms a timerfd: a deadline at 0 is simply in the past. */
		its.it_value.tv_sec = (time_t)(kns / 1000000000u);
		its.it_value.tv_nsec = (long)(kns % 1000000000u);
		if (kns == 0)
			its.it_value.tv_nsec = 1;
	}
	if (timerfd_settime(b->tfd, TFD_TIMER_ABSTIME, &its, NULL) < 0) {
		log_warn("timer base %u: timerfd_settime", b->cpu);
		return;
	}
	b->armed_kns = kns;
}

/* The kernel time of the next jiffies expiry, estimated from the last tick. */
static uint64_t jiffies_kns(struct tb_base *b, uint64_t next)
{
	uint64_t j = __atomic_load_n(&b->tb->tick_jiffies, __ATOMIC_RELAXED);
	uint64_t kns = __atomic_load_n(&b->tb->tick_kns, __ATOMIC_RELAXED);

	if (next == UINT64_MAX)
		return UINT64_MAX;
	if (next <= j)
		return kns;
	if ((next - j) > (UINT64_MAX - kns) / b->tb->jiffy_ns)
		return UINT64_MAX;
	return kns + (next - j) * b->tb->jiffy_ns;
}

static void update_stats(struct tb_base *b, uint64_t ns_kns, uint64_t next_jiffies)
{
	uint64_t jk = jiffies_kns(b, next_jiffies);

	tb_stat_set(&b->st.pending_jiffies, wheel_count(&b->wheel));
	tb_stat_set(&b->st.pending_ns, hrheap_count(&b->heap[0]) + hrheap_count(&b->heap[1]));
	tb_stat_set(&b->st.next_expiry_ns, jk < ns_kns ? jk : ns_kns);
}

/* Deliver, clean up broken clients, and get ready to sleep: true if the
 * thread must not sleep (work left). */
static bool finish_round(struct tb_base *b, bool *clock_err)
{
	uint64_t ns_kns, next, kmono;
	bool busy = false, lazy = false;

	for (struct tb_cc *cc = b->clients; cc; cc = cc->next) {
		if (cc->broken && cc->registered) {
			tb_cc_clear(cc);
			cc_unregister(b, cc);
		}
		tb_cc_wake(cc);
	}
	ns_kns = tb_ns_deadline(b, clock_err);
	b->ns_due_kns = ns_kns;
	kmono = (uint64_t)kclock_ns(CLOCK_MONOTONIC);
	/* A round the timerfd woke us for: how late after its deadline its
	 * records were handed over, wake-up and round in all (wakelead.h). */
	if (b->fired_kns != UINT64_MAX) {
		b->wake_p99_ns = wake_p99_update(b->wake_p99_ns, kmono > b->fired_kns ? kmono - b->fired_kns : 0);
		b->fired_kns = UINT64_MAX;
	}
	for (struct tb_cc *cc = b->clients; cc; cc = cc->next)
		if (cc->registered && tb_cc_over_budget(cc, kmono))
			lazy = true;
	/* A client over budget does not wake us per submission: its ring is
	 * drained with the next batch of turns, at most TB_BUDGET_QUANTUM_NS
	 * from now. */
	if (lazy) {
		uint64_t q = kmono - kmono % TB_BUDGET_QUANTUM_NS + TB_BUDGET_QUANTUM_NS;

		if (q < ns_kns)
			ns_kns = q;
	}
	if (ns_kns != UINT64_MAX && ns_kns <= kmono)
		busy = true; /* due already: another round, not a past deadline
			      * programmed (the dearest reprogram) */
	else
		arm_timerfd(b, ns_kns);
	/* Store the wheel's next expiry, then look at the tick once more:
	 * with the tick thread's store-then-load (timer_bases_tick), one of
	 * us sees the other (both seq_cst). */
	next = wheel_count(&b->wheel) ? wheel_next_expiry(&b->wheel) : UINT64_MAX;
	__atomic_store_n(&b->next_jiffies, next, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&b->tb->tick_jiffies, __ATOMIC_SEQ_CST) >= next)
		busy = true;
	for (struct tb_cc *cc = b->clients; cc; cc = cc->next) {
		if (!cc->registered || tb_cc_over_budget(cc, kmono))
			continue;
		if (cc->sub_more || !ring_prepare_wait(&cc->sub))
			busy = true;
	}
	update_stats(b, b->ns_due_kns, next);
	return busy;
}

static bool base_round(struct tb_base *b, bool *clock_err)
{
	__atomic_store_n(&b->kicked, 0, __ATOMIC_SEQ_CST);
	/* The wheel's clock catches up with the tick before any arm (see
	 * tb_expire_jiffies), and runs what the arms made due after. */
	tb_expire_jiffies(b);
	run_commands(b);
	for (struct tb_cc *cc = b->clients; cc; cc = cc->next) {
		if (!cc->registered)
			continue;
		tb_cc_flush(cc);
		tb_cc_drain(cc);
	}
	tb_expire_jiffies(b);
	tb_expire_ns(b);
	return finish_round(b, clock_err);
}

static void handle_events(struct tb_base *b, const struct epoll_event *ev, int n)
{
	for (int i = 0; i < n; i++) {
		if (ev[i].data.u64 == EV_WAKE) {
			fd_drain(b->wake_efd);
		} else if (ev[i].data.u64 == EV_TIMER) {
			/* The round that follows hands over what was due: how
			 * late it ends is measured (finish_round). */
			b->fired_kns = b->armed_kns;
			/* A one-shot timerfd that fired is disarmed: the next
			 * arm_timerfd must set it even for the same deadline
			 * (one a clock a little behind the kernel's may compute
			 * again), or no wake-up would come for it. */
			b->armed_kns = UINT64_MAX;
		} else {
			struct tb_cc *cc = ev[i].data.ptr;

			fd_drain(cc->sub_efd);
		}
	}
	for (struct tb_cc *cc = b->clients; cc; cc = cc->next)
		if (cc->registered)
			ring_cancel_wait(&cc->sub);
}

/*
 * CPU hotplug: when its CPU goes offline, the kernel moves the thread
 * elsewhere and widens its affinity, for good. A base runs no timer off
 * its CPU: it waits, retrying every HOTPLUG_RETRY_MS, until it can pin
 * itself there again (its timers run late meanwhile, never elsewhere),
 * and says so once each way. Checked at every round (sched_getcpu, no
 * system call) and against the affinity (moved and widened, it may wake
 * on its CPU with the affinity wide and be moved again later): after a
 * sleep that follows a round that ended off the CPU, and otherwise at
 * most every AFFINITY_CHECK_NS, not at every wake-up (measured: one
 * system call in five of a base's per expiry). A round under way when
 * the CPU goes finishes where the kernel put it.
 */
#define HOTPLUG_RETRY_MS 100
#define AFFINITY_CHECK_NS 10000000u

static bool base_on_cpu(struct tb_base *b, bool slept)
{
	cpu_set_t set;
	int r;

	if (sched_getcpu() == (int)b->cpu) {
		if (!slept || (!b->cpu_moved && (uint64_t)kclock_ns(CLOCK_MONOTONIC) < b->affinity_check_kns))
			return true;
		b->cpu_moved = false;
		b->affinity_check_kns = (uint64_t)kclock_ns(CLOCK_MONOTONIC) + AFFINITY_CHECK_NS;
		if (sched_getaffinity(0, sizeof(set), &set) < 0 || (CPU_COUNT(&set) == 1 && CPU_ISSET(b->cpu, &set)))
			return true;
	}
	CPU_ZERO(&set);
	CPU_SET(b->cpu, &set);
	r = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	if (r == 0 && sched_getcpu() == (int)b->cpu) {
		if (b->cpu_away) {
			log_notice("timer base %u: CPU %u is back; its timers run there again", b->cpu, b->cpu);
			b->cpu_away = false;
		}
		return true;
	}
	if (!b->cpu_away) {
		log_warnx("timer base %u: off CPU %u (offline?): %s; its timers wait until it is back",
			  b->cpu, b->cpu, r ? strerror(r) : "moved");
		b->cpu_away = true;
	}
	return false;
}

static void base_loop(struct tb_base *b)
{
	struct epoll_event ev[MAX_EVENTS];
	bool clock_err, slept = false;
	int n, timeout;

	while (!__atomic_load_n(&b->stop, __ATOMIC_ACQUIRE)) {
		/* A run of client faults on needs a wake-up to be ended. */
		bool faults = tb_log_sweep(b);

		if (!base_on_cpu(b, slept)) {
			/* Commands still run (a client leaving waits for them);
			 * no timer is expired and no ring drained here. */
			run_commands(b);
			timeout = HOTPLUG_RETRY_MS;
		} else if (base_round(b, &clock_err)) {
			timeout = 0;
		} else {
			timeout = b->nbacklog || clock_err ? 1 : faults ? 1000 : -1;
		}
		if (sched_getcpu() != (int)b->cpu)
			b->cpu_moved = true;
		slept = timeout != 0;
		n = epoll_wait(b->epfd, ev, MAX_EVENTS, timeout);
		if (n < 0) {
			if (errno != EINTR)
				log_warn("timer base %u: epoll_wait", b->cpu);
			continue;
		}
		handle_events(b, ev, n);
	}
}

/* ---- threads ---- */

static int base_pin(struct tb_base *b)
{
	const struct tb_params *p = &b->tb->p;
	char name[16], who[32];
	cpu_set_t set;
	int r;

	CPU_ZERO(&set);
	CPU_SET(b->cpu, &set);
	r = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	if (r) {
		log_warnx("timer base: cannot pin a thread to CPU %u: %s", b->cpu, strerror(r));
		return -1;
	}
	if (prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL) < 0)
		log_warn("timer base %u: PR_SET_TIMERSLACK", b->cpu);
	/* SCHED_FIFO as settled (rtsched.h); if refused all the same, the
	 * base runs SCHED_OTHER rather than not at all. */
	snprintf(who, sizeof(who), "timer base %u", b->cpu);
	rtsched_apply((uint32_t)p->priority, who);
	snprintf(name, sizeof(name), "clockd-tb/%u", b->cpu);
	pthread_setname_np(pthread_self(), name);
	return 0;
}

static void start_report(struct tb_base *b, int state)
{
	pthread_mutex_lock(&b->lock);
	b->start_state = state;
	pthread_cond_broadcast(&b->cond);
	pthread_mutex_unlock(&b->lock);
}

static void *base_main(void *arg)
{
	struct tb_base *b = arg;

	if (base_pin(b) < 0) {
		start_report(b, -1);
		return NULL;
	}
	start_report(b, 1);
	base_loop(b);
	return NULL;
}

static int base_init(struct timer_bases *tb, struct tb_base *b, unsigned k, unsigned cpu, uint64_t jiffies)
{
	struct epoll_event wake = { .events = EPOLLIN, .data.u64 = EV_WAKE };
	/* Edge-triggered: a fire is one event and the timerfd is never read
	 * (timerfd_settime resets its count); one system call less a
	 * wake-up. */
	struct epoll_event timer = { .events = EPOLLIN | EPOLLET, .data.u64 = EV_TIMER };

	b->tb = tb;
	b->k = k;
	b->cpu = cpu;
	b->wake_efd = b->tfd = b->epfd = -1;
	b->armed_kns = UINT64_MAX;
	b->fired_kns = UINT64_MAX;
	b->ns_due_kns = UINT64_MAX;
	b->next_jiffies = UINT64_MAX;
	b->st.next_expiry_ns = UINT64_MAX;
	b->cmd_tail = &b->cmd_head;
	b->tick_jiffies = jiffies;
	wheel_init(&b->wheel, jiffies);
	hrheap_init(&b->heap[0]);
	hrheap_init(&b->heap[1]);
	pthread_mutex_init(&b->lock, NULL);
	pthread_cond_init(&b->cond, NULL);
	b->wake_efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	b->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	b->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (b->wake_efd < 0 || b->tfd < 0 || b->epfd < 0 ||
	    epoll_ctl(b->epfd, EPOLL_CTL_ADD, b->wake_efd, &wake) < 0 ||
	    epoll_ctl(b->epfd, EPOLL_CTL_ADD, b->tfd, &timer) < 0) {
		log_warn("timer base %u: eventfd, timerfd or epoll", cpu);
		return -1;
	}
	return 0;
}

static void base_fini(struct tb_base *b)
{
	if (b->wake_efd >= 0)
		close(b->wake_efd);
	if (b->tfd >= 0)
		close(b->tfd);
	if (b->epfd >= 0)
		close(b->epfd);
	hrheap_fini(&b->heap[0]);
	hrheap_fini(&b->heap[1]);
	pthread_mutex_destroy(&b->lock);
	pthread_cond_destroy(&b->cond);
}

static int base_start(struct tb_base *b)
{
	int r = pthread_create(&b->thread, NULL, base_main, b);

	if (r) {
		log_warnx("timer base %u: pthread_create: %s", b->cpu, strerror(r));
		return -1;
	}
	b->started = true;
	pthread_mutex_lock(&b->lock);
	while (b->start_state == 0)
		pthread_cond_wait(&b->cond, &b->lock);
	pthread_mutex_unlock(&b->lock);
	return b->start_state > 0 ? 0 : -1;
}

static void base_stop(struct tb_base *b)
{
	if (!b->started)
		return;
	__atomic_store_n(&b->stop, 1, __ATOMIC_RELEASE);
	efd_write(b->wake_efd);
	pthread_join(b->thread, NULL);
	b->started = false;
}

/* Every CPU of @mask must be one the daemon may run on. */
static int check_cpus(uint64_t mask)
{
	cpu_set_t set;
	int bad = 0;

	if (sched_getaffinity(0, sizeof(set), &set) < 0) {
		log_warn("timer bases: sched_getaffinity");
		return -1;
	}
	for (unsigned cpu = 0; cpu < TIMER_SHM_MAX_CPUS; cpu++) {
		if ((mask >> cpu & 1) && !CPU_ISSET(cpu, &set)) {
			log_warnx("timer bases: CPU %u is not in the daemon's CPU affinity", cpu);
			bad = -1;
		}
	}
	return bad;
}

static int check_params(const struct tb_params *p)
{
	if (p->cpu_mask == 0) {
		log_warnx("timer bases: no CPU to run on");
		return -1;
	}
	if (p->priority < 0 || p->priority > 99 || p->hz == 0 || p->max_timers == 0 ||
	    timer_shm_region(p->ring_slots) == 0) {
		log_warnx("timer bases: invalid parameters (priority %d, hz %u, ring_slots %u, max_timers %u)",
			  p->priority, p->hz, p->ring_slots, p->max_timers);
		return -1;
	}
	return check_cpus(p->cpu_mask);
}

/* The clock must be readable: the bases run on it. */
static int page_jiffies(const struct tb_clock *clk, uint64_t *jiffies)
{
	uint64_t ns;
	int r;

	if (!clk->now_ns || !clk->jiffies) {
		log_warnx("timer bases: no clock to run on");
		return -1;
	}
	r = clk->now_ns(clk->ctx, false, &ns);
	if (r < 0) {
		errno = -r;
		log_warn("timer bases: cannot read CLOCKD_MONOTONIC");
		return -1;
	}
	*jiffies = clk->jiffies(clk->ctx);
	return 0;
}

int timer_bases_start(struct timer_bases **out, const struct tb_params *p)
{
	struct timer_bases *tb;
	unsigned n = (unsigned)__builtin_popcountll(p->cpu_mask), k = 0;
	uint64_t jiffies;
	int r = 0;

	*out = NULL;
	if (check_params(p) < 0 || page_jiffies(&p->clock, &jiffies) < 0)
		return -1;
	tb = calloc(1, sizeof(*tb) + n * sizeof(tb->base[0]));
	if (!tb) {
		log_warn("timer bases");
		return -1;
	}
	tb->p = *p;
	tb->cpu_mask = p->cpu_mask;
	tb->n = n;
	tb->jiffy_ns = (1000000000u + p->hz - 1) / p->hz;
	tb->tick_jiffies = jiffies;
	tb->tick_kns = (uint64_t)kclock_ns(CLOCK_MONOTONIC);
	tb->start_kns = tb->tick_kns;
	for (unsigned cpu = 0; cpu < TIMER_SHM_MAX_CPUS && r == 0; cpu++) {
		if (!(p->cpu_mask >> cpu & 1))
			continue;
		r = base_init(tb, &tb->base[k], k, cpu, jiffies);
		k++;
		if (r == 0)
			r = base_start(&tb->base[k - 1]);
	}
	if (r < 0) {
		tb->n = k; /* only those initialised */
		timer_bases_stop(tb);
		return -1;
	}
	*out = tb;
	return 0;
}

void timer_bases_stop(struct timer_bases *tb)
{
	if (!tb)
		return;
	for (unsigned k = 0; k < tb->n; k++)
		base_stop(&tb->base[k]);
	while (tb->clients)
		tb_client_release(tb, tb->clients);
	for (unsigned k = 0; k < tb->n; k++)
		base_fini(&tb->base[k]);
	free(tb);
}

uint64_t timer_bases_cpu_mask(const struct timer_bases *tb)
{
	return tb->cpu_mask;
}

unsigned timer_bases_ncpus(const struct timer_bases *tb)
{
	return tb->n;
}

void timer_bases_tick(struct timer_bases *tb, uint64_t jiffies)
{
	__atomic_store_n(&tb->tick_kns, (uint64_t)kclock_ns(CLOCK_MONOTONIC), __ATOMIC_RELAXED);
	__atomic_store_n(&tb->tick_jiffies, jiffies, __ATOMIC_SEQ_CST);
	for (unsigned k = 0; k < tb->n; k++) {
		struct tb_base *b = &tb->base[k];

		if (jiffies < __atomic_load_n(&b->next_jiffies, __ATOMIC_SEQ_CST))
			continue;
		/* One write per wake-up: the base clears kicked when it runs. */
		if (!__atomic_exchange_n(&b->kicked, 1, __ATOMIC_SEQ_CST))
			efd_write(b->wake_efd);
	}
}

void timer_bases_clock_was_set(struct timer_bases *tb)
{
	for (unsigned k = 0; k < tb->n; k++)
		efd_write(tb->base[k].wake_efd);
}

int timer_bases_cpu_stats(struct timer_bases *tb, unsigned k, struct tb_cpu_stats *out)
{
	const struct tb_base_stats *st;

	if (k >= tb->n)
		return -ENOENT;
	st = &tb->base[k].st;
	memset(out, 0, sizeof(*out));
	out->cpu = tb->base[k].cpu;
	out->clients = (uint32_t)tb_stat_get(&st->clients);
	out->pending_jiffies = tb_stat_get(&st->pending_jiffies);
	out->pending_ns = tb_stat_get(&st->pending_ns);
	out->fired = tb_stat_get(&st->fired);
	out->overruns = tb_stat_get(&st->overruns);
	out->next_expiry_ns = tb_stat_get(&st->next_expiry_ns);
	out->late_p50_ns = tb_hist_quantile(st, 0.50);
	out->late_p99_ns = tb_hist_quantile(st, 0.99);
	out->late_max_ns = tb_stat_get(&st->late_max);
	return 0;
}
