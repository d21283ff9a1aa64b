/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The per-CPU timer bases: the kernel's add_timer_on() for clients. One
 * thread per served CPU, pinned to it (optionally SCHED_FIFO, timer slack
 * 1 ns), owns for every client on that CPU:
 *   - the jiffies timers, in a wheel (wheel.h), expired when the tick
 *     thread says the page's jiffies_64 reached the wheel's next expiry;
 *   - the ns timers (CLOCKD_MONOTONIC and CLOCKD_REALTIME, read through
 *     tb_params.clock: the page and the counter, as clients read them),
 *     in a heap per clock
 *     (hrheap.h), expired by a timerfd on the kernel's CLOCK_MONOTONIC set
 *     from the remaining time on the clockd clock, re-checked at wake-up
 *     and re-armed for what is left, so that no timer runs before its
 *     expiry on the clockd clock;
 *   - the client's submission ring (drained whenever the thread wakes) and
 *     delivery ring (shared/timerrec.h).
 * Nothing in a base is shared with another thread except through the
 * command queue below, the per-base atomics the tick thread reads, and the
 * statistics (relaxed atomics).
 *
 * Ownership: the main thread makes and frees clients (tb_client_new /
 * tb_client_free) and hands ARM/CANCEL from the socket to the bases
 * (tb_client_submit); each base learns of a client through its command
 * queue and forgets it, with all its timers, the same way.
 */
#ifndef CLOCKD_TIMERBASE_H
#define CLOCKD_TIMERBASE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "shared/config.h"
#include "shared/ctlproto.h"
#include "shared/timerrec.h"

struct timer_bases;
struct tb_client;

/*
 * The clocks the bases run on: in the daemon the timekeeper's in-process
 * clock (tk_clock_ns), in tests a fake. Called from every base thread at
 * any time; must not block, and should not fail while the daemon lives.
 */
struct tb_clock {
	/* CLOCKD_MONOTONIC (@realtime false) or CLOCKD_REALTIME, ns since
	 * its epoch (times before 1970 read as 0): 0, or -errno. */
	int (*now_ns)(void *ctx, bool realtime, uint64_t *ns);
	/* The page's jiffies_64. */
	uint64_t (*jiffies)(void *ctx);
	void *ctx;
};

/* What a base needs to know from the configuration. */
struct tb_params {
	struct tb_clock clock;
	uint64_t cpu_mask;    /* CPUs to run a base on (bit n: CPU n); within
			       * the daemon's affinity and < TIMER_SHM_MAX_CPUS */
	int priority;         /* 0: SCHED_OTHER; 1..99: SCHED_FIFO priority
			       * (refused: SCHED_OTHER, logged; rtsched.h) */
	uint32_t hz;
	uint32_t ring_slots;  /* slots of each client ring, a power of two */
	uint32_t max_timers;  /* per client: timer ids 0 .. max_timers - 1 */
	uint64_t max_timers_per_user; /* pending timers of one uid's clients
				       * on all bases (0: no limit); an ARM
				       * beyond gets an EAGAIN record */
	uint64_t lead_ns;     /* ns timers of a real-time client are expired
			       * this much early; the client waits out the
			       * rest (timerrec.h) */
	uint64_t lead_other_ns; /* ... of a SCHED_OTHER client (tb_client_lead) */
	uint64_t min_period_ns;      /* a periodic ns timer's shortest period:
				      * shorter ones are run at this one */
	uint32_t max_expiries_per_sec; /* per client and base: expiries
				      * (periodic or one-shot) beyond it wait
				      * their turn, periods passed over folded
				      * into the overrun (0: no limit) */
};

/*
 * Start a base thread on every CPU of @p->cpu_mask and wait until each runs
 * pinned (and at its priority, or SCHED_OTHER if that is refused: logged,
 * not an error). 0, or -1 with every failure logged (a CPU outside the
 * affinity, a thread that cannot be pinned, ...) and nothing left running.
 * Needs @p->clock readable.
 */
int timer_bases_start(struct timer_bases **out, const struct tb_params *p);
/* (The thread of CPU n is named "clockd-tb/n": ps, top and the tests
 * find it by that name.) */
/* Stop every thread and free everything, clients included. */
void timer_bases_stop(struct timer_bases *tb);
/* The CPUs that have a base, and how many. */
uint64_t timer_bases_cpu_mask(const struct timer_bases *tb);
unsigned timer_bases_ncpus(const struct timer_bases *tb);

/*
 * The tick thread, after each update of the page: @jiffies is the page's
 * jiffies_64. Wakes each base whose next jiffies expiry is due: a relaxed
 * load per base and an eventfd write only then. Cheap; never blocks.
 */
void timer_bases_tick(struct timer_bases *tb, uint64_t jiffies);
/* The tick thread, after CLOCKD_REALTIME was stepped: every base
 * re-computes its realtime deadline (the kernel's clock_was_set). */
void timer_bases_clock_was_set(struct timer_bases *tb);

/*
 * Main thread, for a new client (identity from SO_PEERCRED): make its
 * shared memory (sealed memfd holding struct timer_shm and a submission
 * and a delivery ring per base) and eventfds, and register it with every
 * base. @fds receives what to send with HELLO_ACK, in order: the memfd,
 * then per base its submission and delivery eventfds (1 + 2 * ncpus
 * descriptors; the caller sends them, then closes only fds[0], the
 * memfd: the eventfds stay the client's). NULL with errno on failure
 * (ENOMEM, EMFILE, ...), nothing left behind.
 */
struct tb_client *tb_client_new(struct timer_bases *tb, pid_t pid, uid_t uid, int *fds, unsigned maxfds,
				unsigned *nfds);
/*
 * Main thread: the client is gone (disconnected, died, or broken). Each
 * base cancels all its timers and drops its rings; returns once no base
 * refers to it any more, then frees it.
 */
void tb_client_free(struct timer_bases *tb, struct tb_client *c);
/*
 * Main thread: an ARM or CANCEL received on the socket (already checked
 * by ctl_decode against this client's limits), queued to the base of
 * @cpu (CANCEL: every base). 0, -ENXIO for a CPU without a base, or
 * -ENOMEM when the command cannot be queued (nothing queued then).
 * Errors found later (ENOMEM) reach the client as delivery ERROR records.
 *
 * ARM and CANCEL (from the socket or a submission ring) on a base: an ARM
 * of a pending timer id moves it (the kernel's mod_timer), whatever its
 * clock was; a refused ARM (ERROR record) leaves the id not pending. A
 * CANCEL disarms whatever generation is pending under the id (its gen is
 * not compared) and drops its FIRE records not yet in the delivery ring.
 * Relative ns ARMs count from the clockd clock read when the base takes
 * the ARM (a later step of CLOCKD_REALTIME moves them too); relative
 * jiffies ARMs from the page's jiffies_64 then.
 */
int tb_client_arm(struct timer_bases *tb, struct tb_client *c, const struct ctl_arm *arm, uint32_t gen);
/* Main thread, before the client has its descriptors: its timer ids are
 * 0 .. @max_timers - 1 (at most the bases' max_timers). An ARM beyond:
 * -EDQUOT from tb_client_arm, an EINVAL record from the ring. The
 * timers its user's clients have pending count against
 * tb_params.max_timers_per_user when armed: an ARM beyond is an EAGAIN
 * record (a re-arm marked CTL_ARM_REARM is let through for
 * TB_REARM_GRACE_NS after the start). */
void tb_client_limit(struct tb_client *c, uint32_t max_timers);
/* Main thread: RESERVE. @count > 0 sets that many timer ids aside for
 * @c under max_timers_per_user (-EAGAIN when its user has not that many
 * left, or @c would hold more than its timer ids); @count < 0 gives back
 * as many (at most what it holds). Its ARMs marked CTL_ARM_RESERVED are
 * pending on them while it has one free, and are not refused for the
 * quota. Freed with the client. */
int tb_client_reserve(struct timer_bases *tb, struct tb_client *c, int32_t count);
uint32_t tb_client_max_timers(const struct tb_client *c);
/* Main thread, before the client has its descriptors: its ns timers are
 * handed over tb_params.lead_ns early if @realtime (its delivery threads
 * run SCHED_FIFO or SCHED_RR and spin out the lead), lead_other_ns if not
 * (they sleep it out: the trade of a wake-up for the tail is another
 * one). New clients have lead_ns. */
void tb_client_lead(struct timer_bases *tb, struct tb_client *c, bool realtime);
uint64_t tb_client_lead_ns(const struct tb_client *c);
int tb_client_cancel(struct timer_bases *tb, struct tb_client *c, uint32_t timer_id);
/* True once a base found the client's shared memory corrupt (a ring's
 * counters out of range): the server should disconnect it. */
bool tb_client_broken(const struct tb_client *c);

/* Statistics: counters are since the start (or the client's HELLO);
 * lateness is how late a timer ran after its expiry, in ns (jiffies
 * timers: from the kernel time the page reached that jiffy). */
struct tb_cpu_stats {
	uint32_t cpu;
	uint32_t clients;
	uint64_t pending_jiffies, pending_ns;
	uint64_t fired, overruns;
	uint64_t next_expiry_ns;  /* kernel CLOCK_MONOTONIC of the next
				   * deadline; UINT64_MAX: none */
	uint64_t late_p50_ns, late_p99_ns, late_max_ns;
};
struct tb_client_stats {
	pid_t pid;
	uid_t uid;
	uint64_t pending, fired, overruns, dropped; /* dropped: ERROR records */
};
/* The @k-th base (0 .. ncpus - 1); -ENOENT past the last. */
int timer_bases_cpu_stats(struct timer_bases *tb, unsigned k, struct tb_cpu_stats *out);
void tb_client_stats(struct timer_bases *tb, const struct tb_client *c, struct tb_client_stats *out);

#endif
