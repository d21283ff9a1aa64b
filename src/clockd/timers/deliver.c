/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A client's records out of one base, on the base's thread: the slot
 * table lookup, the client marked broken, and delivery.
 *
 * Delivery: FIRE and ERROR records go to the client's delivery ring, or,
 * when it is full, to a FIFO backlog retried at every wake-up (the base
 * polls at least every millisecond while a backlog is not empty: a client
 * popping its ring does not wake us). A periodic timer with a record still
 * in the backlog folds further expiries into that record's overrun
 * (timer.c: fire); a one-shot's record simply waits. Nothing is lost
 * unless the backlog reaches its bound or cannot grow (then the record is
 * counted as dropped).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clockd/timers/internal.h"
#include "shared/log.h"
#include "shared/tickmath.h"

struct tb_slot *tb_slot_get(struct tb_cc *cc, uint32_t id, bool alloc)
{
	uint32_t c = id / TB_CHUNK_SLOTS;
	struct tb_slot *chunk;

	if (c >= cc->nchunks)
		return NULL;
	chunk = cc->chunk[c];
	if (!chunk && alloc) {
		chunk = calloc(TB_CHUNK_SLOTS, sizeof(*chunk));
		if (!chunk)
			return NULL;
		for (uint32_t i = 0; i < TB_CHUNK_SLOTS; i++) {
			chunk[i].cc = cc;
			chunk[i].id = c * TB_CHUNK_SLOTS + i;
		}
		cc->chunk[c] = chunk;
	}
	return chunk ? &chunk[id % TB_CHUNK_SLOTS] : NULL;
}

void tb_cc_break(struct tb_cc *cc, const char *what)
{
	if (cc->broken)
		return;
	/* Only marked here (we may be inside wheel_expire): the base's loop
	 * clears the timers once the round is over. */
	cc->broken = true;
	__atomic_store_n(&cc->client->broken, 1, __ATOMIC_RELAXED);
	log_repeat(&cc->base->corrupt, LOG_WARNING, false,
		   "timer base %u: client pid %d uid %lu: %s corrupt, client no longer served (further "
		   "such clients are only counted)", cc->base->cpu, (int)cc->client->pid,
		   (unsigned long)cc->client->uid, what);
}

bool tb_log_sweep(struct tb_base *b)
{
	log_repeat_end_quiet(&b->corrupt, TB_LOG_QUIET_NS,
			     "timer base %u: no client with corrupt shared memory for %d s", b->cpu,
			     (int)(TB_LOG_QUIET_NS / NSEC_PER_SEC));
	log_repeat_end_quiet(&b->wake_err, TB_LOG_QUIET_NS,
			     "timer base %u: delivery eventfds written again for %d s", b->cpu,
			     (int)(TB_LOG_QUIET_NS / NSEC_PER_SEC));
	return b->corrupt.count || b->wake_err.count;
}

/* ======== delivery, on the base's thread ======== */

/* ---- backlog ---- */

/* No memory to grow a backlog: the record is dropped and counted. Logged
 * as arms are (timer.c): once when a run of failures starts, once when
 * a backlog grows again a second or more after the last failure. */
static void backlog_oom_note(struct tb_cc *cc)
{
	struct tb_base *b = cc->base;

	log_repeat(&b->oom_backlog, LOG_WARNING, false,
		   "timer base %u: client pid %d: no memory for its delivery backlog, record dropped "
		   "(further drops are only counted)", b->cpu, (int)cc->client->pid);
}

static void backlog_oom_over(struct tb_cc *cc)
{
	struct tb_base *b = cc->base;

	log_repeat_end_quiet(&b->oom_backlog, NSEC_PER_SEC, "timer base %u: delivery backlogs grow again",
			     b->cpu);
}

static bool backlog_empty(const struct tb_backlog *q)
{
	return q->head == q->tail;
}

/* Double the FIFO, keeping every record at the same free-running index
 * (slots remember the index of their owed record). */
static int backlog_grow(struct tb_backlog *q)
{
	uint32_t cap = q->cap ? q->cap * 2 : 64;
	struct ring_rec *rec;

	if (cap == 0 || cap > RING_MAX_SLOTS)
		return -ENOMEM;
	rec = malloc(cap * sizeof(*rec));
	if (!rec)
		return -ENOMEM;
	for (uint32_t i = q->head; i != q->tail; i++)
		rec[i & (cap - 1)] = q->rec[i & (q->cap - 1)];
	free(q->rec);
	q->rec = rec;
	q->cap = cap;
	return 0;
}

/* Squeeze out the voided records (cancelled or re-armed timers), in
 * order; a slot owing a record follows it to its new index. */
static void backlog_compact(struct tb_cc *cc)
{
	struct tb_backlog *q = &cc->backlog;
	uint32_t mask = q->cap - 1, to = q->head;

	for (uint32_t i = q->head; i != q->tail; i++) {
		struct ring_rec r = q->rec[i & mask];
		struct tb_slot *s;

		if (timerrec_voided(&r))
			continue;
		s = tb_slot_get(cc, timerrec_timer_id(&r), false);
		if (timerrec_op(&r) == TREC_FIRE && s && s->owing && s->owed == i)
			s->owed = to;
		q->rec[to & mask] = r;
		to++;
	}
	q->tail = to;
	if (backlog_empty(q))
		cc->base->nbacklog--;
}

/*
 * Room for one more record. A client that never pops and keeps re-arming
 * fills the FIFO with voided records: squeeze them out before growing.
 * What stays live is at most one FIRE per timer id and the ERROR records:
 * beyond max_timers + TB_SUB_BUDGET records, refuse (the caller counts a
 * drop) rather than grow without bound.
 */
static int backlog_room(struct tb_cc *cc)
{
	struct tb_backlog *q = &cc->backlog;
	uint64_t limit = (uint64_t)cc->base->tb->p.max_timers + TB_SUB_BUDGET;
	bool was_empty = backlog_empty(q);

	if (q->tail - q->head < q->cap)
		return 0;
	if (!was_empty)
		backlog_compact(cc);
	if (q->tail - q->head < q->cap - q->cap / 4)
		return 0;
	if (q->tail - q->head >= limit)
		return -ENOBUFS;
	return backlog_grow(q);
}

static void backlog_append(struct tb_cc *cc, const struct ring_rec *r, struct tb_slot *s)
{
	struct tb_backlog *q = &cc->backlog;
	int e = backlog_room(cc);

	if (e < 0) {
		tb_stat_add(&cc->st.dropped, 1);
		if (e == -ENOMEM)
			backlog_oom_note(cc);
		return;
	}
	backlog_oom_over(cc);
	if (backlog_empty(q))
		cc->base->nbacklog++;
	if (s) {
		s->owing = 1;
		s->owed = q->tail;
	}
	q->rec[q->tail & (q->cap - 1)] = *r;
	q->tail++;
}

/* A slot no longer owes the record it had in the backlog: void it. */
void tb_backlog_void(struct tb_cc *cc, struct tb_slot *s)
{
	if (!s->owing)
		return;
	timerrec_void(&cc->backlog.rec[s->owed & (cc->backlog.cap - 1)]);
	s->owing = 0;
}

void tb_backlog_free(struct tb_cc *cc)
{
	if (!backlog_empty(&cc->backlog))
		cc->base->nbacklog--;
	free(cc->backlog.rec);
	memset(&cc->backlog, 0, sizeof(cc->backlog));
}

/* Records were pushed: the soonest due among them, 0 for now. */
static void mark_dirty(struct tb_cc *cc, uint64_t due)
{
	if (!cc->deliv_dirty || due < cc->deliv_due)
		cc->deliv_due = due;
	cc->deliv_dirty = true;
}

void tb_cc_flush(struct tb_cc *cc)
{
	struct tb_backlog *q = &cc->backlog;

	while (!backlog_empty(q) && !cc->broken) {
		struct ring_rec *r = &q->rec[q->head & (q->cap - 1)];
		struct tb_slot *s;
		int n = 0;

		if (!timerrec_voided(r)) {
			n = ring_push(&cc->deliv, r);
			if (n < 0)
				tb_cc_break(cc, "delivery ring");
			if (n <= 0)
				return;
			mark_dirty(cc, 0);
			s = tb_slot_get(cc, timerrec_timer_id(r), false);
			if (s && s->owing && s->owed == q->head)
				s->owing = 0;
		}
		q->head++;
		if (backlog_empty(q))
			cc->base->nbacklog--;
	}
}

/* ---- delivery ---- */

/* Queue @r for the client: straight into the ring unless something waits
 * before it (then it is due now when it gets there). */
void tb_deliver(struct tb_cc *cc, const struct ring_rec *r, struct tb_slot *s, uint64_t due)
{
	int n;

	if (cc->broken)
		return;
	if (backlog_empty(&cc->backlog)) {
		n = ring_push(&cc->deliv, r);
		if (n == 1) {
			mark_dirty(cc, due);
			return;
		}
		if (n < 0) {
			tb_cc_break(cc, "delivery ring");
			return;
		}
	}
	backlog_append(cc, r, s);
}

void tb_deliver_error(struct tb_cc *cc, uint32_t id, uint32_t gen, int err)
{
	struct timerrec t = { .op = TREC_ERROR, .timer_id = id, .gen = gen, .error = err };
	struct ring_rec r;

	timerrec_encode(&t, &r);
	tb_stat_add(&cc->st.dropped, 1);
	tb_deliver(cc, &r, NULL, 0);
}

void tb_cc_wake(struct tb_cc *cc)
{
	uint64_t one = 1;

	if (!cc->deliv_dirty)
		return;
	cc->deliv_dirty = false;
	/* A thread that sleeps on a wake-up of its own gets the raised lead
	 * (heap_key); one that woke to nothing and waits plainly, or never
	 * self-wakes (a real-time one, clockd_dispatch()), the configured
	 * one. */
	switch (ring_consumer_sleep(&cc->deliv)) {
	case 2:
		cc->self_wakes = true;
		break;
	case 1:
		cc->self_wakes = false;
		break;
	default:
		break;
	}
	if (ring_needs_wake_by(&cc->deliv, cc->deliv_due) && write(cc->deliv_efd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		log_repeat(&cc->base->wake_err, LOG_WARNING, true,
			   "timer base %u: client pid %d: delivery eventfd (further failures are only counted)",
			   cc->base->cpu, (int)cc->client->pid);
}
