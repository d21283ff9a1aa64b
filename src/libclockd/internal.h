/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libclockd internals: the mapped page and the read paths. */
#ifndef CLOCKD_LIB_INTERNAL_H
#define CLOCKD_LIB_INTERNAL_H

#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <clockd/clockd.h>
#include <clockd/page.h>

#define CLOCKD_EXPORT __attribute__((visibility("default")))

/*
 * The library's thread-locals (40 bytes in all) are in the static TLS
 * block: an access is a load at a fixed offset from the thread pointer,
 * where the default model for a shared object calls __tls_get_addr()
 * (6 % of a delivery thread's time at 100 callbacks a round), and is
 * async-signal-safe even in a program that dlopen()s the library (a
 * first access through __tls_get_addr() may allocate). glibc keeps room
 * for a dlopen()ed library's few bytes (the rtld.optional_static_tls
 * tunable, 512 by default).
 */
#define LIB_THREAD __thread __attribute__((tls_model("initial-exec")))

/* How often an absent or replaced page is looked for again, ns. */
#define PAGE_RETRY_NS 10000000

extern const struct clockd_page *lib_page_ptr;

/* The mapped page, or NULL with the reason (ENOENT, EACCES, EPROTO, ...)
 * in *@err. errno is left as it was: a read that then falls back to the
 * kernel succeeds without touching errno. */
const struct clockd_page *lib_page_open_slow(int *err);
/* Called when a read found the writer gone: look for a replaced file. */
void lib_page_gone(void);
/* The path in use ($CLOCKD_SHM or the default). */
const char *lib_page_path(void);

static inline const struct clockd_page *lib_page(int *err)
{
	const struct clockd_page *pg = __atomic_load_n(&lib_page_ptr, __ATOMIC_ACQUIRE);

	if (__builtin_expect(pg != NULL, 1))
		return pg;
	return lib_page_open_slow(err);
}

/*
 * Time namespaces (page.c): the process's offsets (shared/timens.h), read
 * once with the page path and again in a fork child. The page and the
 * daemon keep the initial namespace's monotonic time: a read adds
 * lib_timens_mono to CLOCKD_MONOTONIC, _RAW and _COARSE, an absolute
 * monotonic expiry loses it on its way to the daemon, and every
 * comparison with the page's kernel_mono_ns takes it off the caller's
 * CLOCK_MONOTONIC first. Nonzero: the inline reads of <clockd/clockd.h>
 * are not told where the page is (they would not add it), so they call
 * the library.
 */
extern int64_t lib_timens_mono, lib_timens_boot;

static inline int64_t lib_timens_mono_ns(void)
{
	return __atomic_load_n(&lib_timens_mono, __ATOMIC_RELAXED);
}

/* A real-time scheduling policy (sched_getscheduler): the library's
 * threads spin where these would sleep, and take the caller's priority. */
static inline bool lib_policy_realtime(int policy)
{
	return policy == SCHED_FIFO || policy == SCHED_RR;
}

/* The offset of kernel clock @id in this namespace. */
int64_t lib_timens_kernel(clockid_t id);
/* The kernel's CLOCK_MONOTONIC as the initial namespace reads it, ns. */
int64_t lib_host_kmono(void);

/* The daemon owning @pg is alive (robust futex word, see page.h). */
static inline bool lib_writer_alive(const struct clockd_page *pg)
{
	uint32_t w = __atomic_load_n((const uint32_t *)(const void *)pg->writer_lock, __ATOMIC_RELAXED);

	return (w & CLOCKD_PAGE_OWNER_TID_MASK) != 0 && !(w & CLOCKD_PAGE_OWNER_DIED);
}

/*
 * Every read's freshness check: the daemon is alive and has raised no
 * alarm. Two loads from the cache line that holds seq, so it costs next to
 * nothing. A daemon that is alive but silent (its tick device hung) raises
 * the alarm itself; the fine reads also see silence in the counter delta.
 * What this cannot see is a daemon stopped whole (SIGSTOP): the coarse
 * reads and jiffies then return the last tick until systemd's watchdog
 * kills it; clockd_status() and the fine reads report it.
 */
static inline bool lib_page_ok(const struct clockd_page *pg)
{
	return lib_writer_alive(pg) && __atomic_load_n(&pg->alarm, __ATOMIC_RELAXED) == 0;
}

/* A device counter the client reads itself (CLOCKD_VCLOCK_HPET: the
 * mapped main counter; _PHC: the opened PTP clock, ns), mapped or opened
 * on first use: 1 with *@c read, 0 when this client may not (tick
 * resolution), -1 when the page names a device that is not one of its
 * mode (a forged page: the read fails with EPROTO). */
int lib_vclock_read(uint32_t mode, uint64_t *c);

/* Kernel clock for a clockd clock id (the fallback), -1 if not one. */
clockid_t lib_kernel_equivalent(clockid_t id);
/* page.c: the fallback is on (set from $CLOCKD_FALLBACK with the path). */
extern int lib_fallback;

/* The caller asked for the kernel-clock fallback and @err allows it. */
bool lib_may_fall_back(int err);
/* Fail a read of clockd clock @id with errno @err, or fall back. */
int lib_read_failed(clockid_t id, struct timespec *ts, int err);

/*
 * Timers. The files call down only: ptimer.c (POSIX flavour) -> timer.c
 * (ids, delivery, kernel flavour) -> conn.c (the connection) -> tlock.c;
 * the calls back up go through ops tables (lib_conn_ops, lib_tkind_ops),
 * so that tests/layers/deps.sh finds no call loop. One mutex, lib_tlock
 * (tlock.c), guards the connection pointer, the id table and every
 * timer's state, so that the order of records in a ring is the order of
 * the state changes. Timer callbacks run without it.
 */
struct lib_conn;
struct timerrec;
struct ring_rec;

enum lib_tkind { LIB_TK_KERNEL = 0, LIB_TK_POSIX = 1 };

/* The library's state of one timer, kernel-flavoured (in
 * clockd_timer.lib) or POSIX (in struct clockd_posix_timer). id and
 * pending mean something only while epoch is the table's (timer.c). A lost connection
 * keeps every pending timer pending (in the id table of the lost
 * connection) while the library reconnects; a new connection's table takes
 * them over (bumping the epoch, so that ids of the old one mean nothing)
 * and arms them again from expires, period, clock and flags. A daemon that
 * does not come back within the reconnect timeout drops the table, which
 * un-arms every timer at once. */
struct lib_tcore {
	uint32_t id;       /* timer id of this connection, if has_id */
	uint32_t epoch;    /* the table's epoch when id and pending were set */
	int32_t cpu;       /* CPU last armed on; -1: never */
	int32_t err;       /* errno of an ERROR record, for the next call */
	uint32_t running;  /* callbacks running now */
	uint8_t kind;      /* enum lib_tkind */
	uint8_t pending;
	uint8_t has_id;
	uint8_t periodic;
	/* What re-arms it on a new connection: the absolute expiry (jiffies
	 * or clock ns; for a periodic timer the next one not yet delivered),
	 * the period, the record's clock and flags. */
	uint64_t expires;
	uint64_t period;
	uint8_t clock;
	uint8_t flags;
	uint8_t pinned;    /* its CPU was asked for (add_timer_on, sev.cpu):
			    * a daemon that no longer serves it fails it */
};

/* tlock.c: lib_tlock, and its condition (broadcast when a callback ends
 * or a connection is lost; waited on with the lock held). */
void lib_tlock_lock(void);
void lib_tlock_unlock(void);
/* lib_tlock_lock() for the async-signal-safe calls: -EAGAIN when a signal
 * handler interrupted its own thread holding the lock unmasked. */
int lib_tlock_lock_sig(void);
/* The lock without blocking signals (two system calls fewer): for the
 * calls POSIX does not ask to be async-signal-safe. */
void lib_tlock_lock_fast(void);
void lib_tlock_unlock_fast(void);
/* Called first in a thread of ours, created with every signal blocked:
 * its lib_tlock_lock() is then the fast one. */
void lib_tlock_thread_masked(void);
void lib_tlock_wait(void);
void lib_tlock_broadcast(void);
/* In a forked child: both made new (the parent's may be held). */
void lib_tlock_after_fork_child(void);

/* conn.c. The control socket's address: $CLOCKD_SOCKET, else the file
 * "control" beside the page. 0 or -ENAMETOOLONG. Any thread. */
struct sockaddr_un;
int lib_socket_path(struct sockaddr_un *sa);

/* What a connection calls back into the timer table for (timer.c), all
 * with lib_tlock held but deliver. */
struct lib_conn_ops {
	/* Run the records @recs popped from @c's delivery ring (without
	 * lib_tlock held); -EPROTO if one is malformed (@c is then lost). */
	int (*deliver)(struct lib_conn *c, const struct ring_rec *recs, int n);
	/* A new connection with a quota of @max_timers: fresh id table,
	 * which takes over every timer still pending in the old one (they
	 * get new ids, not yet armed). 0 or -ENOMEM (the old table kept).
	 * *@lost: how many pending timers the quota left out. */
	int (*table_reset)(uint32_t max_timers, unsigned *lost);
	/* Right after table_reset() and @c made current: arm every timer of
	 * the table on @c at its expiry. Returns how many could not be
	 * armed (not pending any more); stops when @c is lost meanwhile
	 * (the rest stay pending for the next one). */
	unsigned (*table_rearm)(struct lib_conn *c);
	/* Some timer of the table is pending. */
	bool (*table_any_pending)(void);
	/* Forget the table: every timer stops being pending at once. */
	void (*table_drop)(void);
};

/* conn.c, all with lib_tlock held. */
/* The connection, made now if there is none, calling back into @ops;
 * NULL with *@err set. */
struct lib_conn *lib_conn_get(const struct lib_conn_ops *ops, int *err);
/* Ring pair index for @cpu (-1: the calling thread's CPU, or the lowest
 * served one), or -1 if the daemon does not serve @cpu. */
int lib_conn_index(const struct lib_conn *c, int cpu);
int lib_conn_cpu(const struct lib_conn *c, int k);
/* Push @t into pair @k's submission ring; 0, or -ECONNRESET, -EAGAIN. */
int lib_conn_submit(struct lib_conn *c, int k, const struct timerrec *t);
/* Start pair @k's delivery thread if it has none (not after clockd_fd). */
int lib_conn_serve(struct lib_conn *c, int k);
/* The daemon is gone or broke the protocol: drop @c and reconnect (the
 * timers stay pending until the reconnect timeout). */
void lib_conn_lose(struct lib_conn *c);
/* The current connection, or NULL (no connection attempt). */
struct lib_conn *lib_conn_current(void);
/* A POSIX timer made (timer_create) claims one of its user's
 * max_timers_per_user: reserved on the daemon now if connected (else
 * when an arm connects). 0, or -EAGAIN when the user has none left. */
int lib_conn_claim(void);
/* A POSIX timer deleted: its claim given back (spare reserved ids too). */
void lib_conn_unclaim(void);
/* Reserve on @c what the claims need: 0, or -EAGAIN (the user's quota
 * is full), or another -errno (the ARMs then count when armed). */
int lib_conn_cover(struct lib_conn *c);
/* The connection was lost and the library is reconnecting: an arming call
 * that cannot connect keeps its timer pending for the new connection. */
bool lib_conn_reconnecting(void);
/* In a delivery, from the thread draining: a timer expires next at @at
 * (CLOCKD_MONOTONIC on the daemon's scale, not the namespace's): the one
 * just delivered, after its period, or one its callback armed. A
 * SCHED_OTHER delivery thread then sleeps until the soonest such expiry
 * and wakes by its own timeout, not by the daemon. Elsewhere, no effect. */
void lib_conn_expect(int64_t at);

/* timer.c */
/* Most records lib_conn_ops.deliver takes at once. */
#define LIB_DELIVER_MAX 64
/* With lib_tlock held: arm @core on CPU @cpu (-1: current or lowest)
 * with the record fields of @t (clock, flags, expires, period). */
int lib_core_arm(struct lib_tcore *core, int cpu, const struct timerrec *t);
/* With lib_tlock held: disarm; 1 if it was pending, 0 if not, -errno. */
int lib_core_cancel(struct lib_tcore *core);
/* With lib_tlock held: lib_conn_claim() and lib_conn_unclaim(), for the
 * POSIX timers (ptimer.c). */
int lib_core_claim(void);
void lib_core_unclaim(void);
/* With lib_tlock held: the connection, made now if need be (a daemon
 * answers once its page is live); 0, also while reconnecting, or
 * -errno. */
int lib_core_connect(void);
bool lib_core_pending(const struct lib_tcore *core);
/* With lib_tlock held: wait until no callback of @core runs;
 * -EDEADLK from its own callback. */
int lib_core_wait(struct lib_tcore *core);
/* The calling thread runs @core's callback. */
bool lib_core_in_callback(const struct lib_tcore *core);
/* With lib_tlock held: give the id back if it is unused. */
void lib_core_release(struct lib_tcore *core);
/* With lib_tlock held: the ERROR errno kept for @core, cleared. */
int lib_core_take_err(struct lib_tcore *core);

/* An expiry of a timer of a flavour other than the kernel one: note
 * (lib_tlock held) records the expiry and overrun; notify (not held)
 * sends the notification. ptimer.c registers the POSIX flavour's at its
 * first timer. */
struct lib_ptimer_note {
	uint64_t count;   /* 1 + overrun */
	int64_t expires;  /* on clock: notify no sooner */
	clockid_t clock;  /* the arm's clock (CLOCKD_MONOTONIC if relative) */
};
struct lib_tkind_ops {
	void (*note)(struct lib_tcore *core, const struct timerrec *r, struct lib_ptimer_note *n);
	void (*notify)(struct lib_tcore *core, const struct lib_ptimer_note *n);
};
void lib_tkind_register(enum lib_tkind kind, const struct lib_tkind_ops *ops);
/* sleep.c: wait until clockd clock @id reads @target ns, asleep on the
 * kernel's clock throughout (not spinning its last stretch, as
 * clockd_clock_nanosleep does): for a SCHED_OTHER thread, whose spin the
 * scheduler may cut for a whole time slice. Precise with a timer slack
 * of 1 ns (the delivery threads'). The caller's signal mask is kept. */
void lib_wait_asleep(clockid_t id, int64_t target);

/* ptimer.c: the si_timerid of @t's signals (SIGEV_SIGNAL), as the kernel
 * gives its timer's id there: the preload's timer id. 0 unless set. */
void lib_ptimer_set_sigid(clockd_timer_t t, int id);

#endif
