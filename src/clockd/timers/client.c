/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A client of the timer bases (timerbase.h), on the main thread: its
 * registration with every base, the socket path's ARM and CANCEL, its
 * statistics. Its memory is made and freed in shm.c, its records go out
 * in deliver.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include "clockd/timers/internal.h"
#include "shared/log.h"
#include "shared/tickmath.h"

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

/* The count of @uid's armed timers, shared by its clients; NULL
 * (ENOMEM). */
static struct tb_user *user_get(struct timer_bases *tb, uid_t uid)
{
	struct tb_user *u;

	for (u = tb->users; u; u = u->next)
		if (u->uid == uid)
			break;
	if (!u) {
		u = calloc(1, sizeof(*u));
		if (!u)
			return NULL;
		u->uid = uid;
		u->next = tb->users;
		tb->users = u;
	}
	u->refs++;
	return u;
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
	c = tb_client_alloc(tb, pid, uid, &memfd);
	if (!c)
		return NULL;
	c->user = user_get(tb, uid);
	if (!c->user || client_register(tb, c) < 0) {
		e = c->user ? errno : ENOMEM;
		close(memfd);
		tb_user_put(tb, c->user);
		tb_client_destroy(c);
		errno = e;
		return NULL;
	}
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
}

void tb_client_free(struct timer_bases *tb, struct tb_client *c)
{
	if (!c)
		return;
	for (unsigned k = 0; k < tb->n; k++)
		cc_del(&c->cc[k]);
	if (c->user)
		__atomic_fetch_sub(&c->user->reserved, c->reserved, __ATOMIC_RELAXED);
	tb_client_release(tb, c);
}

/*
 * Giving back ids still armed (a CANCEL in flight on a ring, or a client
 * that lies) must not leave those timers counted nowhere: as many of them
 * as the client's reserved ids no longer cover are moved onto its user's
 * armed count (and c->moved tells pending_dec which count to lower).
 */
static void move_uncovered(struct tb_client *c)
{
	uint64_t r = __atomic_load_n(&c->res_armed, __ATOMIC_RELAXED);
	uint64_t have = __atomic_load_n(&c->reserved, __ATOMIC_RELAXED);

	while (r > have) {
		if (__atomic_compare_exchange_n(&c->res_armed, &r, have, true, __ATOMIC_RELAXED,
						__ATOMIC_RELAXED)) {
			__atomic_fetch_add(&c->moved, r - have, __ATOMIC_RELAXED);
			__atomic_fetch_add(&c->user->armed, r - have, __ATOMIC_RELAXED);
			return;
		}
	}
}

int tb_client_reserve(struct timer_bases *tb, struct tb_client *c, int32_t count)
{
	struct tb_user *u = c->user;
	uint64_t max = tb->p.max_timers_per_user;
	uint64_t n, total;

	if (count < 0) {
		n = (uint64_t)-(int64_t)count;
		if (n > c->reserved)
			n = c->reserved;
		__atomic_store_n(&c->reserved, c->reserved - n, __ATOMIC_RELAXED);
		__atomic_fetch_sub(&u->reserved, n, __ATOMIC_RELAXED);
		move_uncovered(c);
		return 0;
	}
	n = (uint64_t)count;
	if (c->reserved + n > tb_client_max_timers(c))
		return -EAGAIN;
	/* Added first, then checked: two clients of the user reserving at
	 * once cannot both pass on the same room. */
	total = __atomic_add_fetch(&u->reserved, n, __ATOMIC_RELAXED) + __atomic_load_n(&u->armed, __ATOMIC_RELAXED);
	if (max && total > max) {
		__atomic_fetch_sub(&u->reserved, n, __ATOMIC_RELAXED);
		return -EAGAIN;
	}
	__atomic_store_n(&c->reserved, c->reserved + n, __ATOMIC_RELAXED);
	return 0;
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

void tb_client_lead(struct timer_bases *tb, struct tb_client *c, bool realtime)
{
	__atomic_store_n(&c->lead_ns, realtime ? tb->p.lead_ns : tb->p.lead_other_ns, __ATOMIC_RELAXED);
}

uint64_t tb_client_lead_ns(const struct tb_client *c)
{
	return __atomic_load_n(&c->lead_ns, __ATOMIC_RELAXED);
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

