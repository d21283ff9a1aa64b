/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The time page file: created once (initialised under a temporary name and
 * renamed into place, so no reader ever maps a half-written page), never
 * shrunk, reused by a restarted daemon. One daemon per page (flock).
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

#endif
