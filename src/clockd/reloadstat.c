/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clockd/reloadstat.h"
#include "clockd/safepath.h"
#include "shared/log.h"

/* The record as text into @buf; its length, or 0 when it does not fit. */
static size_t record(const struct reloadstat *rs, const char *result, const char *messages, char *buf,
		     size_t len)
{
	size_t o = (size_t)snprintf(buf, len, "clockd-reload 1\npid %ld\nseq %llu\nresult %s\n", (long)getpid(),
				    (unsigned long long)rs->seq, result);

	for (const char *m = messages; m && *m && o < len;) {
		size_t n = strcspn(m, "\n");

		o += (size_t)snprintf(buf + o, len - o, "message %.*s\n", (int)n, m);
		m += n + (m[n] == '\n');
	}
	if (o < len)
		o += (size_t)snprintf(buf + o, len - o, "end %llu\n", (unsigned long long)rs->seq);
	return o < len ? o : 0;
}

static void put(struct reloadstat *rs, const char *result, const char *messages)
{
	char buf[16384];
	size_t n = record(rs, result, messages, buf, sizeof(buf));

	if (n == 0) /* too many messages: the outcome without them */
		n = record(rs, result, "(too many messages for the record: see the log)", buf, sizeof(buf));
	/* Truncate, then one write: a reader sees nothing, the old record or
	 * (rarely) part of the new one, which it recognises by its missing
	 * "end" line. */
	if (ftruncate(rs->fd, 0) < 0 || pwrite(rs->fd, buf, n, 0) != (ssize_t)n)
		log_warn("reload record: cannot write it");
}

void reloadstat_open(struct reloadstat *rs, const char *page, uid_t uid, gid_t gid)
{
	char base[256], name[300], tmp[320];
	int dirfd;

	rs->fd = -1;
	rs->seq = 0;
	dirfd = safepath_dir("page", page, base, sizeof(base));
	if (dirfd < 0)
		return;
	snprintf(name, sizeof(name), "%s%s", base, RELOADSTAT_SUFFIX);
	rs->fd = safepath_mktemp(dirfd, name, tmp, sizeof(tmp));
	if (rs->fd < 0) {
		log_warn("%s%s: cannot create the reload record; clockctl reload will not tell the outcome",
			 page, RELOADSTAT_SUFFIX);
	} else if ((geteuid() == 0 && fchown(rs->fd, uid, gid) < 0) || renameat(dirfd, tmp, dirfd, name) < 0) {
		log_warn("%s%s: cannot install the reload record; clockctl reload will not tell the outcome",
			 page, RELOADSTAT_SUFFIX);
		unlinkat(dirfd, tmp, 0);
		close(rs->fd);
		rs->fd = -1;
	} else {
		put(rs, "none", NULL);
	}
	close(dirfd);
}

void reloadstat_write(struct reloadstat *rs, const char *result, const char *messages)
{
	if (rs->fd < 0)
		return;
	rs->seq++;
	put(rs, result, messages);
}

void reloadstat_close(struct reloadstat *rs)
{
	if (rs->fd >= 0)
		close(rs->fd);
	rs->fd = -1;
}
