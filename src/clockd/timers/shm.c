/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A client's memory (main thread): its sealed shared memory, the ring pair
 * and eventfds of each base, its slot tables, and their release once no
 * base refers to the client any more.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include "clockd/timers/internal.h"

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

void tb_client_destroy(struct tb_client *c)
{
	for (unsigned k = 0; k < c->ncc; k++)
		cc_fini(&c->cc[k]);
	if (c->mem)
		munmap(c->mem, c->size);
	free(c);
}

struct tb_client *tb_client_alloc(struct timer_bases *tb, pid_t pid, uid_t uid, int *memfd)
{
	struct tb_client *c = calloc(1, sizeof(*c) + tb->n * sizeof(c->cc[0]));
	int e;

	if (!c)
		return NULL;
	c->pid = pid;
	c->max_timers = tb->p.max_timers;
	c->lead_ns = tb->p.lead_ns;
	c->uid = uid;
	c->size = timer_shm_size(tb->n, tb->p.ring_slots);
	*memfd = shm_make(c->size, &c->mem);
	if (*memfd < 0) {
		c->mem = NULL;
		goto err_destroy;
	}
	shm_header(tb, c->mem);
	for (unsigned k = 0; k < tb->n; k++) {
		c->ncc = k + 1;
		if (cc_init(tb, c, k) < 0)
			goto err_close_memfd;
	}
	return c;

err_close_memfd:
	e = errno;
	close(*memfd);
	errno = e;
err_destroy:
	e = errno;
	tb_client_destroy(c);
	errno = e;
	return NULL;
}

void tb_user_put(struct timer_bases *tb, struct tb_user *u)
{
	struct tb_user **pp;

	if (!u || --u->refs)
		return;
	for (pp = &tb->users; *pp != u; pp = &(*pp)->next)
		;
	*pp = u->next;
	free(u);
}

void tb_client_release(struct timer_bases *tb, struct tb_client *c)
{
	tb_user_put(tb, c->user);
	if (c->prev)
		c->prev->next = c->next;
	else
		tb->clients = c->next;
	if (c->next)
		c->next->prev = c->prev;
	tb_client_destroy(c);
}
