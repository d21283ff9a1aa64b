/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Timer records: what a client and clockd put in the shared rings of
 * shared/ring.h, and the shared memory that holds those rings.
 *
 * A client, after HELLO, gets one memfd and two eventfds per CPU the daemon
 * runs timers on (see "Hand-over" below). Per CPU there are two rings:
 *   - the submission ring, client -> daemon: ARM and CANCEL records, so that
 *     arming and cancelling a timer is a store into shared memory, not a
 *     round trip on the socket;
 *   - the delivery ring, daemon -> client: FIRE and ERROR records, one per
 *     expiry delivered (periodic expiries that find the ring full coalesce
 *     into the next record's overrun count; nothing is lost).
 * The daemon's thread pinned to that CPU is the only consumer of every
 * client's submission ring for the CPU and the only producer of their
 * delivery rings; the client serialises its own producers.
 *
 * Generations: every ARM of a timer id carries a generation the client
 * chooses (it bumps it at each arm); the daemon copies the generation of
 * the arm into each FIRE. A FIRE whose generation is not the client's
 * current one for that id is stale (the timer was cancelled or re-armed
 * meanwhile, perhaps on another CPU) and the client drops it.
 *
 * Record layouts (struct ring_rec's four 64-bit words, in host order: both
 * ends run on the same machine):
 *
 *   submission         word0                          word1       word2    word3
 *   ARM     op 1 (bits 0-7) | clock (8-15) |          gen (0-31)  expires  period
 *           flags (16-31) | timer_id (32-63)
 *   CANCEL  op 2 | timer_id (32-63)                   gen         0        0
 *
 *   delivery
 *   FIRE    op 0x81 | timer_id (32-63)                gen         expires  overrun
 *   ERROR   op 0x82 | timer_id (32-63)                gen |       0        0
 *                                                     errno (32-63)
 *
 * Lead: the daemon may put a FIRE of a ns timer (CTL_CLOCK_MONOTONIC or
 * _REALTIME) in the ring up to its configured lead (timer_lead_ns for a
 * real-time client, timer_lead_other_ns for others) before the expiry,
 * so that waking the client overlaps the last stretch; the client must
 * not notify before its clock reads FIRE.expires (libclockd waits for it:
 * a real-time thread spins the end, another sleeps). Jiffies timers have
 * no lead. No lead is over TIMERREC_LEAD_MAX_NS: the configured ones are
 * bounded by it, a raised one too (timers/wakelead.h), and the library
 * waits no longer than that for an expiry.
 *
 * ARM's clock, flags, expires and period mean what they mean in the
 * control protocol's ARM (shared/ctlproto.h: CTL_CLOCK_*, CTL_ARM_*), and
 * are checked the same way. FIRE.expires is the expiry this record is for
 * (for a periodic timer, the latest of the coalesced ones); overrun is the
 * number of further expiries coalesced into it (0 normally). ERROR says the
 * daemon refused a submission (errno: EINVAL for a field out of range,
 * ENXIO for a CPU it does not serve, ENOMEM); the timer is not pending.
 * Unused bits are 0; a record with a non-zero unused bit is refused.
 *
 * Hand-over: the HELLO_ACK datagram carries, with SCM_RIGHTS, the memfd
 * then, for each served CPU k in the order of timershm.cpu[], its
 * submission eventfd (the client writes it, as the ring's wake-up says)
 * then its delivery eventfd (the client reads it). The memfd is sealed
 * against shrinking and growing, so a client cannot make the daemon fault
 * on it. Its layout:
 *   offset 0                  struct timer_shm (one page)
 *   TIMER_SHM_HDR + 2k * R    CPU k's submission ring
 *   TIMER_SHM_HDR + (2k+1) R  CPU k's delivery ring
 * with R = timer_shm_region(ring_slots). The daemon does not trust anything
 * a client writes into the header page after the hand-over.
 */
#ifndef CLOCKD_SHARED_TIMERREC_H
#define CLOCKD_SHARED_TIMERREC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shared/ctlproto.h"
#include "shared/ring.h"

enum timerrec_op {
	TREC_ARM = 0x01,
	TREC_CANCEL = 0x02,
	TREC_FIRE = 0x81,
	TREC_ERROR = 0x82,
};

/* A decoded record, either direction. */
struct timerrec {
	uint8_t op;        /* enum timerrec_op */
	uint8_t clock;     /* ARM: CTL_CLOCK_* */
	uint16_t flags;    /* ARM: CTL_ARM_* */
	uint32_t timer_id;
	uint32_t gen;
	int32_t error;     /* ERROR: a positive errno */
	uint64_t expires;  /* ARM, FIRE */
	uint64_t period;   /* ARM */
	uint64_t overrun;  /* FIRE */
};

void timerrec_encode(const struct timerrec *t, struct ring_rec *r);

/*
 * Decode a submission record (ARM or CANCEL) and check it as ctl_decode
 * checks ARM and CANCEL (timer_id against lim->max_timers, the CPU is the
 * ring's and is not checked here). 0, or -EINVAL with a reason naming the
 * field in @why (may be NULL).
 */
int timerrec_decode_sub(const struct ring_rec *r, const struct ctl_limits *lim, struct timerrec *out,
			char *why, size_t whylen);
/* Decode a delivery record (FIRE or ERROR); 0 or -EINVAL. */
int timerrec_decode_deliv(const struct ring_rec *r, struct timerrec *out);

/*
 * Fields of an encoded record, without decoding or checking it (the daemon's
 * bookkeeping of records it holds back for a full delivery ring, and the
 * id and generation to name in the ERROR for a refused submission).
 */
uint8_t timerrec_op(const struct ring_rec *r);
uint32_t timerrec_timer_id(const struct ring_rec *r);
uint32_t timerrec_gen(const struct ring_rec *r);
/*
 * A FIRE still held back, folding in later expiries of its periodic timer:
 * its expires becomes @expires and its overrun grows by @more.
 */
void timerrec_fire_fold(struct ring_rec *r, uint64_t expires, uint64_t more);
/*
 * Void a record held back (its timer was cancelled or re-armed): op 0 is
 * none of enum timerrec_op, so a voided record is never delivered.
 */
void timerrec_void(struct ring_rec *r);
bool timerrec_voided(const struct ring_rec *r);

#define TIMERREC_LEAD_MAX_NS 1000000u
#define TIMER_SHM_MAGIC 0x6d6873746d6b6364ull /* "dckmtshm" */
#define TIMER_SHM_VERSION 1u
#define TIMER_SHM_HDR 4096u
#define TIMER_SHM_MAX_CPUS 64u

struct timer_shm {
	uint64_t magic;
	uint32_t version;
	uint32_t ncpus;       /* served CPUs: ring pairs that follow */
	uint32_t ring_slots;  /* slots in every ring */
	uint32_t region;      /* R: bytes of one ring's region */
	uint32_t cpu[TIMER_SHM_MAX_CPUS]; /* CPU number of ring pair k */
};

/* R: ring_mem_size(@slots) rounded up to a page; 0 if @slots is invalid. */
size_t timer_shm_region(uint32_t slots);
/* The whole memfd size for @ncpus ring pairs of @slots. */
size_t timer_shm_size(uint32_t ncpus, uint32_t slots);

#endif
