/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The outcome of the last reload, for `clockctl reload` to report: a small
 * text file beside the time page, "PAGE.reload", which only this module
 * writes (the main thread, at start and at each SIGHUP). Mode 0600, owned
 * by the user the daemon runs as: who may signal the daemon (root, its
 * user: kill(2)'s rule) may read why a reload failed.
 *
 * Format, one "word value" per line:
 *
 *     clockd-reload 1          format version
 *     pid 1234                 the daemon
 *     seq 3                    reloads so far (0: none since the start)
 *     result applied           none | applied | unchanged | rejected
 *     message hz changed; ...  zero or more lines, in order
 *     end 3                    seq again: the record is whole
 *
 * The file is rewritten in place (truncate, then one write); a reader that
 * finds no "end" equal to "seq" read it half-written and reads again.
 */
#ifndef CLOCKD_RELOADSTAT_H
#define CLOCKD_RELOADSTAT_H

#include <stdint.h>
#include <sys/types.h>

#define RELOADSTAT_SUFFIX ".reload"

struct reloadstat {
	int fd; /* -1: not kept (reload works, clockctl cannot tell the outcome) */
	uint64_t seq;
};

/* Create PAGE.reload afresh beside @page (before privileges go; owned by
 * @uid:@gid) with a "none" record. On failure one warning and fd -1. */
void reloadstat_open(struct reloadstat *rs, const char *page, uid_t uid, gid_t gid);

/* A new record: seq + 1, @result and @messages ("line\n"..., may be NULL). */
void reloadstat_write(struct reloadstat *rs, const char *result, const char *messages);

void reloadstat_close(struct reloadstat *rs);

#endif
