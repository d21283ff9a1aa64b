/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The time page file: created once (initialised under a temporary name and
 * renamed into place, so no reader ever maps a half-written page), never
 * shrunk, reused by a restarted daemon. One daemon per page (flock).
 *
 * The page's only writer: every store to the page goes through this API
 * (tests/layers/deps.sh checks that no other file of the daemon writes it).
 *  - the time data, under the two-copy latch: pagefile_publish(), from the
 *    tick thread only (the timekeeper);
 *  - the header: pagefile_set_*(), tick thread (or main before the tick
 *    thread starts), with relaxed atomic stores: readers take it as
 *    informative, or read it once when they map the page;
 *  - alarm and flags: atomic read-modify-write of single bits, from any
 *    thread (the tick thread, the discipline, the main thread's watchdog),
 *    so no update is lost;
 *  - the device table, under dev_seq: pagefile_set_device(), from one
 *    thread at a time (the tick thread once running).
 * The daemon's own readers use pagefile_read().
 */
#ifndef CLOCKD_PAGEFILE_H
#define CLOCKD_PAGEFILE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <clockd/page.h>

struct pagefile {
	int fd;
	struct clockd_page *pg;
	char path[256];
	int dirfd;                      /* its directory, checked (safepath.h) */
	char base[256];                 /* its name there */
	bool reused;                    /* a previous daemon's page */
	bool same_boot;                 /* ... written during this boot */
	struct clockd_page_data prev;   /* its last consistent data */
	struct clockd_page prev_header; /* and its header fields */
	uint8_t boot_id[16];            /* this boot */
	/* Per copy of the latch, the writer's private word published with
	 * it (the timekeeper: the clocksource whose counter cycle_last
	 * counts). Read under the same latch, never shared with clients. */
	const void *tag[2];
};

/* Open or create the page at @path; refuses a symlink, a file of another
 * owner, a group/other-writable file, a file that is not a clockd page of
 * this ABI, and a page another daemon holds. -1 after logging why. */
int pagefile_open(struct pagefile *pf, const char *path);
/* Give the open page (new or reused: the configuration may have changed
 * since it was created) group @gid ((gid_t)-1: left as it is) and @mode,
 * of which only the read bits of group and others count (only the daemon
 * ever writes the page). 0, or -1 after logging why. */
int pagefile_set_access(struct pagefile *pf, mode_t mode, gid_t gid);
/* Mark the page as owned by this (live) thread: readers see the daemon up
 * from here on. Call after the first publication. */
int pagefile_take(struct pagefile *pf);
/* Clean shutdown: STOPPING, then release ownership (readers see "gone"). */
void pagefile_release(struct pagefile *pf);
void pagefile_close(struct pagefile *pf);

/* Publish @d (both copies) with the writer's word @tag. Tick thread. */
void pagefile_publish(struct pagefile *pf, const struct clockd_page_data *d, const void *tag);
/* The daemon's readers (any thread), the latch reader pair with the tag:
 *     do {
 *             d = pagefile_read_begin(pf, &seq, &tag);
 *             ... relaxed loads of *d ...
 *     } while (pagefile_read_retry(pf, seq));
 * No other file of the daemon touches pf->pg. */
const struct clockd_page_data *pagefile_read_begin(const struct pagefile *pf, uint32_t *seq, const void **tag);
bool pagefile_read_retry(const struct pagefile *pf, uint32_t seq);

/* Header fields. */
void pagefile_set_epoch(struct pagefile *pf, uint64_t generation, uint64_t initial_jiffies);
void pagefile_set_rate(struct pagefile *pf, uint32_t hz, uint32_t tick_ns, uint64_t stale_ns);
void pagefile_set_extrapolate(struct pagefile *pf, uint64_t extrapolate_ns);
void pagefile_set_start(struct pagefile *pf, int64_t start_mono_ns);
void pagefile_set_jiffies_epoch(struct pagefile *pf, uint64_t jiffies_base, int64_t epoch_ns);
/* Names are cut to their fields and NUL-terminated. */
void pagefile_set_source(struct pagefile *pf, const char *name, const char *vclock_path);
void pagefile_set_tick(struct pagefile *pf, const char *name);

/* Alarm (CLOCKD_ALARM_*) and flags (CLOCKD_PAGE_*): set or clear @bits
 * atomically; each returns the word as it was before. */
uint32_t pagefile_alarm_raise(struct pagefile *pf, uint32_t bits);
uint32_t pagefile_alarm_clear(struct pagefile *pf, uint32_t bits);
uint32_t pagefile_alarm(const struct pagefile *pf);
uint32_t pagefile_flags_set(struct pagefile *pf, uint32_t bits);
uint32_t pagefile_flags_clear(struct pagefile *pf, uint32_t bits);

/* The device table: @n entries in use (the rest zeroed), and entry @i. */
void pagefile_set_ndevices(struct pagefile *pf, unsigned n);
void pagefile_set_device(struct pagefile *pf, unsigned i, const struct clockd_page_device *e);

#endif
