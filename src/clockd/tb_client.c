/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A client of the timer bases (timerbase.h): its sealed shared memory, its
 * eventfds, its registration with every base, the socket path's ARM and
 * CANCEL, and its statistics (main thread); then its records out on each
 * base (the base's thread).
 *
 * Delivery: FIRE and ERROR records go to the client's delivery ring, or,
 * when it is full, to a FIFO backlog retried at every wake-up (the base
 * polls at least every millisecond while a backlog is not empty: a client
 * popping its ring does not wake us). A periodic timer with a record still
 * in the backlog folds further expiries into that record's overrun
 * (tb_timer.c: fire); a one-shot's record simply waits. Nothing is lost
 * unless the backlog reaches its bound or cannot grow (then the record is
 * counted as dropped).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include "clockd/tb_internal.h"
#include "shared/log.h"
#include "shared/tickmath.h"

#define SEALS (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)

/* A sealed memfd of @size bytes, mapped at *@mem. The fd, or -1. */
static int shm_make(size_t size, void **mem)
{
	int fd = memfd_create("clockd-timers", MFD_CLOEXEC | MFD_ALLOW_SEALING);

	if (fd < 0)
		return -1;
	if (ftruncate(fd, (off_t)size) < 0 || fcntl(fd, F_ADD_SEALS, SEALS) < 0)
		goto err_close_fd;
	*mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (*mem == MAP_FAILED)
		goto err_close_fd;
	return fd;

err_close_fd:
	{
		int e = errno;

		close(fd);
		errno = e;
	}
	return -1;
}

static void shm_header(struct timer_bases *tb, struct timer_shm *shm)
{
	shm->magic = TIMER_SHM_MAGIC;
	shm->version = TIMER_SHM_VERSION;
	shm->ncpus = tb->n;
	shm->ring_slots = tb->p.ring_slots;
	shm->region = (uint32_t)timer_shm_region(tb->p.ring_slots);
	for (unsigned k = 0; k < tb->n; k++)
		shm->cpu[k] = tb->base[k].cpu;
}

/* Rings, eventfds and the slot table of the client on base @k. */
static int cc_init(struct timer_bases *tb, struct tb_client *c, unsigned k)
{
	struct tb_cc *cc = &c->cc[k];
	size_t region = timer_shm_region(tb->p.ring_slots);
	char *at = (char *)c->mem + TIMER_SHM_HDR + 2 * k * region;

	cc->client = c;
	cc->base = &tb->base[k];
	cc->sub_efd = cc->deliv_efd = -1;
	if (ring_init(&cc->sub, at, region, tb->p.ring_slots) < 0 ||
	    ring_init(&cc->deliv, at + region, region, tb->p.ring_slots) < 0) {
		errno = EINVAL;
		return -1;
	}
	cc->nchunks = (uint32_t)((tb->p.max_timers + (uint64_t)TB_CHUNK_SLOTS - 1) / TB_CHUNK_SLOTS);
	cc->chunk = calloc(cc->nchunks, sizeof(*cc->chunk));
	cc->sub_efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	cc->deliv_efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (!cc->chunk)
		errno = ENOMEM;
	return cc->chunk && cc->sub_efd >= 0 && cc->deliv_efd >= 0 ? 0 : -1;
}

static void cc_fini(struct tb_cc *cc)
{
	/* Only once no base refers to it: the chunks are freed by the base
	 * (DEL), or here after the threads stopped. */
	for (uint32_t i = 0; cc->chunk && i < cc->nchunks; i++)
		free(cc->chunk[i]);
	free(cc->chunk);
	free(cc->backlog.rec);
	if (cc->sub_efd >= 0)
		close(cc->sub_efd);
	if (cc->deliv_efd >= 0)
		close(cc->deliv_efd);
}

static void client_destroy(struct tb_client *c)
{
	for (unsigned k = 0; k < c->ncc; k++)
		cc_fini(&c->cc[k]);
	if (c->mem)
		munmap(c->mem, c->size);
	free(c);
}

static void cc_del(struct tb_cc *cc)
{
	struct tb_cmd cmd = { .type = TB_CMD_DEL, .cc = cc };

	tb_cmd_call(cc->base, &cmd);
}

/* Tell every base; on a failure, take it back from those told. */
static int client_register(struct timer_bases *tb, struct tb_client *c)
{
	for (unsigned k = 0; k < tb->n; k++) {
		struct tb_cmd cmd = { .type = TB_CMD_ADD, .cc = &c->cc[k] };
		int r = tb_cmd_call(&tb->base[k], &cmd);

		if (r < 0) {
			while (k-- > 0)
				cc_del(&c->cc[k]);
			errno = -r;
			return -1;
		}
	}
	return 0;
}

struct tb_client *tb_client_new(struct timer_bases *tb, pid_t pid, uid_t uid, int *fds, unsigned maxfds,
				unsigned *nfds)
{
	struct tb_client *c;
	int memfd, e;

	if (maxfds < 1 + 2 * tb->n) {
		errno = EINVAL;
		return NULL;
	}
	c = calloc(1, sizeof(*c) + tb->n * sizeof(c->cc[0]));
	if (!c)
		return NULL;
	c->pid = pid;
	c->max_timers = tb->p.max_timers;
	c->uid = uid;
	c->size = timer_shm_size(tb->n, tb->p.ring_slots);
	memfd = shm_make(c->size, &c->mem);
	if (memfd < 0) {
		c->mem = NULL;
		goto err_destroy;
	}
	shm_header(tb, c->mem);
	for (unsigned k = 0; k < tb->n; k++) {
		c->ncc = k + 1;
		if (cc_init(tb, c, k) < 0)
			goto err_close_memfd;
	}
	if (client_register(tb, c) < 0)
		goto err_close_memfd;
	fds[0] = memfd;
	for (unsigned k = 0; k < tb->n; k++) {
		fds[1 + 2 * k] = c->cc[k].sub_efd;
		fds[2 + 2 * k] = c->cc[k].deliv_efd;
	}
	*nfds = 1 + 2 * tb->n;
	c->next = tb->clients;
	if (tb->clients)
		tb->clients->prev = c;
	tb->clients = c;
	return c;

err_close_memfd:
	e = errno;
	close(memfd);
	errno = e;
err_destroy:
	e = errno;
	client_destroy(c);
	errno = e;
	return NULL;
}

void tb_client_release(struct timer_bases *tb, struct tb_client *c)
{
	if (c->prev)
		c->prev->next = c->next;
	else
		tb->clients = c->next;
	if (c->next)
		c->next->prev = c->prev;
	client_destroy(c);
}

void tb_client_free(struct timer_bases *tb, struct tb_client *c)
{
	if (!c)
		return;
	for (unsigned k = 0; k < tb->n; k++)
		cc_del(&c->cc[k]);
	tb_client_release(tb, c);
}

static int base_of_cpu(const struct timer_bases *tb, uint32_t cpu)
{
	for (unsigned k = 0; k < tb->n; k++)
		if (tb->base[k].cpu == cpu)
			return (int)k;
	return -ENXIO;
}

void tb_client_limit(struct tb_client *c, uint32_t max_timers)
{
	__atomic_store_n(&c->max_timers, max_timers, __ATOMIC_RELAXED);
}

uint32_t tb_client_max_timers(const struct tb_client *c)
{
	return __atomic_load_n(&c->max_timers, __ATOMIC_RELAXED);
}

int tb_client_arm(struct timer_bases *tb, struct tb_client *c, const struct ctl_arm *arm, uint32_t gen)
{
	struct timerrec t = {
		.op = TREC_ARM,
		.clock = (uint8_t)arm->clock,
		.flags = (uint16_t)arm->flags,
		.timer_id = arm->timer_id,
		.gen = gen,
		.expires = arm->expires,
		.period = arm->period,
	};
	int k = base_of_cpu(tb, arm->cpu);
	struct tb_cmd *cmd;

	if (k < 0)
		return k;
	if (arm->clock > UINT8_MAX || arm->flags > UINT16_MAX)
		return -EINVAL;
	if (arm->timer_id >= tb_client_max_timers(c))
		return -EDQUOT;
	cmd = calloc(1, sizeof(*cmd));
	if (!cmd)
		return -ENOMEM;
	cmd->type = TB_CMD_ARM;
	cmd->cc = &c->cc[k];
	timerrec_encode(&t, &cmd->rec);
	tb_cmd_post(&tb->base[k], cmd);
	return 0;
}

int tb_client_cancel(struct timer_bases *tb, struct tb_client *c, uint32_t timer_id)
{
	struct timerrec t = { .op = TREC_CANCEL, .timer_id = timer_id };
	struct tb_cmd *cmd[TIMER_SHM_MAX_CPUS];

	/* All or nothing: allocate every base's command first. */
	for (unsigned k = 0; k < tb->n; k++) {
		cmd[k] = calloc(1, sizeof(*cmd[k]));
		if (!cmd[k]) {
			while (k-- > 0)
				free(cmd[k]);
			return -ENOMEM;
		}
	}
	for (unsigned k = 0; k < tb->n; k++) {
		cmd[k]->type = TB_CMD_CANCEL;
		cmd[k]->cc = &c->cc[k];
		timerrec_encode(&t, &cmd[k]->rec);
		tb_cmd_post(&tb->base[k], cmd[k]);
	}
	return 0;
}

bool tb_client_broken(const struct tb_client *c)
{
	return __atomic_load_n(&c->broken, __ATOMIC_RELAXED) != 0;
}

void tb_client_stats(struct timer_bases *tb, const struct tb_client *c, struct tb_client_stats *out)
{
	memset(out, 0, sizeof(*out));
	out->pid = c->pid;
	out->uid = c->uid;
	for (unsigned k = 0; k < tb->n; k++) {
		const struct tb_cc_stats *st = &c->cc[k].st;

		out->pending += tb_stat_get(&st->pending);
		out->fired += tb_stat_get(&st->fired);
		out->overruns += tb_stat_get(&st->overruns);
		out->dropped += tb_stat_get(&st->dropped);
	}
}

/* ======== delivery, on the base's thread ======== */

/* ---- backlog ---- */

/* No memory to grow a backlog: the record is dropped and counted. Logged
 * as arms are (tb_timer.c): once when a run of failures starts, once when
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

		if (r.word[0] == 0)
			continue;
		s = tb_slot_get(cc, (uint32_t)(r.word[0] >> 32), false);
		if ((r.word[0] & 0xff) == TREC_FIRE && s && s->owing && s->owed == i)
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
	cc->backlog.rec[s->owed & (cc->backlog.cap - 1)].word[0] = 0;
	s->owing = 0;
}

void tb_backlog_free(struct tb_cc *cc)
{
	if (!backlog_empty(&cc->backlog))
		cc->base->nbacklog--;
	free(cc->backlog.rec);
	memset(&cc->backlog, 0, sizeof(cc->backlog));
}

void tb_cc_flush(struct tb_cc *cc)
{
	struct tb_backlog *q = &cc->backlog;

	while (!backlog_empty(q) && !cc->broken) {
		struct ring_rec *r = &q->rec[q->head & (q->cap - 1)];
		struct tb_slot *s;
		int n = 0;

		if (r->word[0] != 0) {
			n = ring_push(&cc->deliv, r);
			if (n < 0)
				tb_cc_break(cc, "delivery ring");
			if (n <= 0)
				return;
			cc->deliv_dirty = true;
			s = tb_slot_get(cc, (uint32_t)(r->word[0] >> 32), false);
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
 * before it. @s: the timer it is for (NULL: an ERROR). */
void tb_deliver(struct tb_cc *cc, const struct ring_rec *r, struct tb_slot *s)
{
	int n;

	if (cc->broken)
		return;
	if (backlog_empty(&cc->backlog)) {
		n = ring_push(&cc->deliv, r);
		if (n == 1) {
			cc->deliv_dirty = true;
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
	tb_deliver(cc, &r, NULL);
}

void tb_cc_wake(struct tb_cc *cc)
{
	uint64_t one = 1;

	if (!cc->deliv_dirty)
		return;
	cc->deliv_dirty = false;
	if (ring_needs_wake(&cc->deliv) && write(cc->deliv_efd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		log_repeat(&cc->base->wake_err, LOG_WARNING, true,
			   "timer base %u: client pid %d: delivery eventfd (further failures are only counted)",
			   cc->base->cpu, (int)cc->client->pid);
}
