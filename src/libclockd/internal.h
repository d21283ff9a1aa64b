/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libclockd internals: the mapped page and the read paths. */
#ifndef CLOCKD_LIB_INTERNAL_H
#define CLOCKD_LIB_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <clockd/clockd.h>
#include <clockd/page.h>

#define CLOCKD_EXPORT __attribute__((visibility("default")))

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
 * on first use; false when this client may not (tick resolution). */
bool lib_vclock_read(uint32_t mode, uint64_t *c);

/* Kernel clock for a clockd clock id (the fallback), -1 if not one. */
clockid_t lib_kernel_equivalent(clockid_t id);
extern int lib_fallback;

/* The caller asked for the kernel-clock fallback and @err allows it. */
bool lib_may_fall_back(int err);
/* Fail a read of clockd clock @id with errno @err, or fall back. */
int lib_read_failed(clockid_t id, struct timespec *ts, int err);

#endif
