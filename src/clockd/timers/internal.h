/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Inside the per-CPU timer bases (timerbase.h): the structures shared by
 * the module's files (listed below, before their functions).
 *
 * Who touches what:
 *   struct timer_bases   written by the main thread at start and stop; the
 *                        tick thread stores tick_jiffies / tick_kns.
 *   struct tb_base       the base thread owns everything but the command
 *                        queue (mutex), next_jiffies / kicked (atomics the
 *                        tick thread reads) and the statistics (relaxed
 *                        atomics the main thread reads).
 *   struct tb_cc         a client on one base: the base thread owns it from
 *                        the ADD command to the DEL acknowledgement; the
 *                        main thread reads only its statistics meanwhile.
 */
#ifndef CLOCKD_TB_INTERNAL_H
#define CLOCKD_TB_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "clockd/timers/hrheap.h"
#include "clockd/timers/timerbase.h"
#include "clockd/timers/wheel.h"
#include "shared/log.h"
#include "shared/ring.h"
#include "shared/timerrec.h"

/* Slots are allocated per client and base in chunks of this many. */
#define TB_CHUNK_SLOTS 1024u
/* At most this many submissions per client per round: a flooding client
 * cannot delay the others' expiries by more than one batch. */
#define TB_SUB_BUDGET 4096u
/* The turns of timers over their client's budget are rounded up to this
 * much kernel time (ns): a wake-up serves the turns of a millisecond. */
#define TB_BUDGET_QUANTUM_NS 1000000u
/* Lateness histogram: 4 buckets per power of two of ns, up to 2^31 ns. */
#define TB_HIST_BUCKETS 128u

enum tb_kind {
	TB_NONE = 0,     /* not pending */
	TB_JIFFIES,      /* in the base's wheel */
	TB_MONO,         /* in the CLOCKD_MONOTONIC heap */
	TB_REAL,         /* in the CLOCKD_REALTIME heap */
};

struct tb_cc;

/* One timer id of one client on one base. Kept small: 1e6 of them exist
 * for a client using 1e6 timers. */
struct tb_slot {
	union {
		struct wheel_timer w;  /* kind TB_JIFFIES */
		struct hrheap_node h;  /* kind TB_MONO, TB_REAL */
	} u;
	struct tb_cc *cc;
	uint64_t period;   /* 0: one-shot */
	uint32_t id;
	uint32_t gen;
	uint32_t owed;     /* backlog index of its undelivered FIRE, if owing */
	uint32_t folded;   /* periods passed over its client's expiry budget,
			    * added to the overrun of its next FIRE */
	uint32_t lag;      /* ns timer at its turn over budget: its period's
			    * expiry is this much before its deadline */
	uint8_t owing;
	uint8_t kind;      /* enum tb_kind */
	uint8_t paid;      /* over its client's budget, it waits for a token
			    * reserved for it (timer.c: budget_take) */
	uint8_t past;      /* armed for a time already past: its first
			    * expiry is not late by the time before the arm */
	uint8_t reserved;  /* pending on one of its client's reserved ids
			    * (user_take), not on its user's armed count */
	uint32_t early;    /* ns timers: its heap key is its deadline less
			    * this, its client's lead when armed (heap_key) */
};

/* FIFO of records that found the delivery ring full. */
struct tb_backlog {
	struct ring_rec *rec;
	uint32_t head, tail, cap; /* head/tail: free-running; cap: power of two */
};

/* Per client statistics on one base (relaxed atomics). */
struct tb_cc_stats {
	uint64_t pending, fired, overruns, dropped;
};

/* A client on one base. */
struct tb_cc {
	struct tb_client *client;
	struct tb_base *base;
	struct tb_cc *next;          /* the base's list of clients */
	struct ring sub, deliv;      /* daemon side: consumer, producer */
	int sub_efd, deliv_efd;
	bool registered;             /* sub_efd is in the base's epoll */
	bool broken;                 /* stop serving (shared memory corrupt) */
	bool deliv_dirty;            /* records pushed since the last wake */
	uint64_t deliv_due;          /* with deliv_dirty: the soonest expiry
				      * (CLOCKD_MONOTONIC) among them, 0 if one
				      * is not on that clock (tb_cc_wake) */
	bool sub_more;               /* the budget ran out: drain again */
	bool prefaulted;             /* rings mapped in (ring_prefault) */
	bool self_wakes;             /* its delivery thread last slept on a
				      * wake-up of its own (tb_cc_wake):
				      * its lead is raised (wakelead.h) */
	struct tb_slot **chunk;      /* nchunks pointers, NULL until used */
	uint32_t nchunks;
	uint64_t npending;           /* base thread's own count */
	uint64_t budget_tat;         /* expiry budget (GCRA): kernel CLOCK_MONOTONIC
				      * at which the spent budget is paid back */
	struct tb_backlog backlog;
	struct tb_cc_stats st;
};

/* A user's timers against max_timers_per_user: the ids its clients
 * reserved (RESERVE, at timer_create) and the timers armed on none of
 * them. Made and freed by the main thread with its first and last
 * client; reserved is counted by the main thread, armed by the bases
 * (both atomic). */
struct tb_user {
	struct tb_user *next;          /* timer_bases' list (main thread) */
	uid_t uid;
	unsigned refs;                 /* its clients (main thread) */
	uint64_t reserved;             /* atomic: its clients' reserved ids */
	uint64_t armed;                /* atomic: its pending timers on no
					* reserved id */
};

/* A reconnecting client's re-arms (CTL_ARM_REARM) may take a user past
 * max_timers_per_user for this long after the bases start: the timers
 * were armed within the quota under the previous daemon, and a process
 * that started during the outage must not take their place. */
#define TB_REARM_GRACE_NS (60 * NSEC_PER_SEC)

struct tb_client {
	struct tb_client *prev, *next; /* timer_bases' list (main thread) */
	struct tb_user *user;
	pid_t pid;
	uid_t uid;
	int broken;                    /* atomic: a base found it corrupt */
	uint32_t max_timers;           /* atomic: its timer ids (tb_client_limit) */
	uint64_t lead_ns;              /* atomic: its ns timers are expired this
					* much early (tb_client_lead) */
	uint64_t reserved;             /* atomic: ids it reserved (main thread) */
	uint64_t res_armed;            /* atomic: its pending timers on them
					* (CTL_ARM_RESERVED; the bases) */
	uint64_t moved;                /* atomic: of those, how many a RESERVE
					* releasing ids still armed moved onto
					* its user's armed count */
	void *mem;                     /* the shared memory, mapped */
	size_t size;
	unsigned ncc;
	struct tb_cc cc[];             /* one per base, in base order */
};

enum tb_cmd_type {
	TB_CMD_ADD,     /* a client arrives (acknowledged) */
	TB_CMD_DEL,     /* a client leaves (acknowledged) */
	TB_CMD_ARM,     /* from the socket (freed by the base) */
	TB_CMD_CANCEL,  /* from the socket (freed by the base) */
};

struct tb_cmd {
	struct tb_cmd *next;
	enum tb_cmd_type type;
	struct tb_cc *cc;
	struct ring_rec rec;  /* ARM, CANCEL: as a submission record */
	bool wait;            /* the sender waits for done */
	bool done;
	int result;           /* ADD: 0 or a negative errno */
};

struct tb_base_stats {
	uint64_t pending_jiffies, pending_ns, fired, overruns;
	uint64_t next_expiry_ns, clients, late_max;
	uint64_t hist[TB_HIST_BUCKETS];
};

struct tb_base {
	struct timer_bases *tb;
	unsigned k;        /* index among the bases */
	unsigned cpu;
	pthread_t thread;
	bool started;      /* the thread was created */
	bool cpu_away;     /* the thread's own: off its CPU (hotplug) */
	bool cpu_moved;    /* the thread's own: the last round ended off it */
	uint64_t affinity_check_kns; /* the thread's own: the next look at
				      * its affinity after a sleep */
	int wake_efd, tfd, epfd;
	/* start-up handshake */
	int start_state;   /* 0 running set-up, 1 ready, -1 failed */
	uint64_t armed_kns;    /* the timerfd's deadline; UINT64_MAX: disarmed */
	uint64_t ns_due_kns;   /* when the first ns timer is to be handed over
				* (kernel CLOCK_MONOTONIC), as of the last round */
	uint64_t fired_kns;    /* the thread's own: the deadline of the timerfd
				* that woke this round; UINT64_MAX: none */
	uint64_t wake_p99_ns;  /* the thread's own: the 99th percentile of how
				* late its timerfd's rounds end (wakelead.h) */
	/* command queue */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct tb_cmd *cmd_head, **cmd_tail;
	int stop;          /* atomic */
	/* tick handshake */
	uint64_t next_jiffies; /* atomic: the wheel's next expiry */
	int kicked;            /* atomic: the tick thread wrote wake_efd */
	/* the base thread's own */
	struct wheel wheel;
	struct hrheap heap[2];  /* [0] CLOCKD_MONOTONIC, [1] CLOCKD_REALTIME */
	struct tb_cc *clients;
	unsigned nbacklog;      /* clients with a non-empty backlog */
	uint64_t tick_jiffies;  /* what the last round expired up to */
	struct tb_base_stats st;
	/* out of memory: logged once a run, ended by a success a second or
	 * more after the last failure */
	struct log_repeat oom_arm, oom_backlog;
	/* per-client faults: once a run for the base, ended by
	 * tb_log_sweep() TB_LOG_QUIET_NS after the last (a client that
	 * corrupts its ring and reconnects in a loop is two lines) */
	struct log_repeat corrupt, wake_err;
};

/* A per-client fault run ends once none came for this long, ns. */
#define TB_LOG_QUIET_NS (10 * NSEC_PER_SEC)
/* End the runs of per-client faults that went quiet (base thread); true
 * while one is still on (the loop must wake to end it). */
bool tb_log_sweep(struct tb_base *b);

struct timer_bases {
	struct tb_params p;
	uint64_t cpu_mask;
	unsigned n;
	uint64_t tick_jiffies;   /* atomic: the tick thread's last call */
	uint64_t tick_kns;       /* atomic: kernel CLOCK_MONOTONIC of it */
	uint64_t jiffy_ns;       /* ns per jiffy, rounded up */
	struct tb_client *clients;
	struct tb_user *users;
	uint64_t start_kns;      /* kernel CLOCK_MONOTONIC at the start */
	struct tb_base base[];
};

/* timerbase.c: send a command to a base; call waits for it to be run
 * (returns cmd->result), post does not (the base frees cmd). */
int tb_cmd_call(struct tb_base *b, struct tb_cmd *cmd);
void tb_cmd_post(struct tb_base *b, struct tb_cmd *cmd);



/*
 * The files of the timers module, and who calls whom (one way, top first):
 *     client.c   main thread: clients' registration, socket ARM/CANCEL, stats
 *     timerbase.c the base threads: commands, the round, the timerfd
 *     timer.c    a client's timers on a base: submissions, expiry, lateness
 *     deliver.c  a client's records out of a base: slots, backlog, rings
 *     shm.c      a client's memory: made (client.c), freed (client.c, timerbase.c)
 *     wheel.c, hrheap.c  the timer structures
 */

/* shm.c, main thread: a new client of @tb, its shared memory (*@memfd,
 * sealed and mapped) and each base's rings and eventfds made, registered
 * with no base yet. NULL with errno, nothing left behind. */
struct tb_client *tb_client_alloc(struct timer_bases *tb, pid_t pid, uid_t uid, int *memfd);
/* Free everything of @c (no base refers to it). */
void tb_client_destroy(struct tb_client *c);
/* A user loses a client (NULL: none); the last one frees it. */
void tb_user_put(struct timer_bases *tb, struct tb_user *u);
/* Unlink @c from @tb's clients and destroy it (its user put). */
void tb_client_release(struct timer_bases *tb, struct tb_client *c);

/* deliver.c, run by the base thread. */
/* The slot of timer @id, allocating its chunk when @alloc; NULL when the
 * id is out of range, or its chunk does not exist (or cannot be made). */
struct tb_slot *tb_slot_get(struct tb_cc *cc, uint32_t id, bool alloc);
/* The client's shared memory is corrupt: stop serving it (logged). */
void tb_cc_break(struct tb_cc *cc, const char *what);
/* Queue @r for the client: straight into its delivery ring unless records
 * wait before it; @s: the timer it is for (NULL: an ERROR record); @due:
 * its expiry on CLOCKD_MONOTONIC (a realtime one's at the clocks' offset
 * when it fires), 0 for none (jiffies). A client that said it wakes by
 * itself by then is not woken for it (ring_needs_wake_by). */
void tb_deliver(struct tb_cc *cc, const struct ring_rec *r, struct tb_slot *s, uint64_t due);
/* An ERROR record, counted as dropped. */
void tb_deliver_error(struct tb_cc *cc, uint32_t id, uint32_t gen, int err);
/* @s no longer owes the record it has in the backlog: void it. */
void tb_backlog_void(struct tb_cc *cc, struct tb_slot *s);
void tb_backlog_free(struct tb_cc *cc);
/* Push what waits in the backlog. */
void tb_cc_flush(struct tb_cc *cc);
/* Write the delivery eventfd if records were pushed and the client may
 * sleep. */
void tb_cc_wake(struct tb_cc *cc);

/* timer.c: run by the base thread. */
/* Drain up to TB_SUB_BUDGET submissions (sub_more: there may be more). */
void tb_cc_drain(struct tb_cc *cc);
/* Apply one submission record (from the ring or a socket command). */
void tb_cc_submit(struct tb_cc *cc, const struct ring_rec *r);
/* Cancel every timer, free slots and backlog. */
void tb_cc_clear(struct tb_cc *cc);
/* Expire due timers of the wheel and the heaps. */
void tb_expire_jiffies(struct tb_base *b);
void tb_expire_ns(struct tb_base *b);
/* Between batches of submissions: run the ns timers that have come due
 * and wake their clients, so that a client submitting as fast as it can
 * does not hold the others' expiries up for its whole budget. */
void tb_expire_due(struct tb_base *b);
/* The kernel CLOCK_MONOTONIC deadline of the earliest ns timer
 * (UINT64_MAX: none); -1 in *err if a clockd clock could not be read. */
uint64_t tb_ns_deadline(struct tb_base *b, bool *err);
/* @cc is over its expiry budget at kernel time @kmono (its timers wait
 * their turns): its submissions may wait for the next batch of turns. */
bool tb_cc_over_budget(const struct tb_cc *cc, uint64_t kmono);
void tb_hist_add(struct tb_base *b, uint64_t late_ns);
uint64_t tb_hist_quantile(const struct tb_base_stats *st, double q);

/* Relaxed atomics for statistics. */
static inline void tb_stat_add(uint64_t *p, uint64_t v)
{
	__atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}
static inline void tb_stat_set(uint64_t *p, uint64_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELAXED);
}
static inline uint64_t tb_stat_get(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

#endif
