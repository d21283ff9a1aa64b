/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * clockctl reload: ask the daemon to re-read its configuration, as
 * `systemctl reload clockd` does: SIGHUP to the pid the page names. A
 * signal rather than a control-socket message because reload is an
 * administrator's act: kill(2)'s rule (root, or the daemon's own user) is
 * the permission check, with no new protocol message to guard. The daemon
 * logs the outcome (applied, needs a restart, no change, or rejected with
 * FILE:LINE errors and the running configuration kept) and writes it to
 * its reload record beside the page (src/clockd/reloadstat.h, mode 0600
 * for the same two users), which we wait for and print: a rejected
 * configuration exits CTL_EXIT_REJECTED with the daemon's reasons.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clockctl/clockctl.h"

/* The page's pid is informative (a daemon that died leaves it): signal it
 * only if the daemon is alive (live or stale, not gone) and the process
 * is still called clockd. */
static int daemon_pid_is_clockd(uint32_t pid)
{
	char path[64], comm[32] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/comm", (unsigned)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	if (!fgets(comm, sizeof(comm), f))
		comm[0] = '\0';
	fclose(f);
	return strncmp(comm, "clockd", 6) == 0;
}

/* The daemon's reload record (its format: src/clockd/reloadstat.h). */
#define RECORD_SUFFIX ".reload"
#define RECORD_WAIT_MS 60000 /* a loaded machine: the main loop may lag */

struct record {
	uint32_t pid;
	uint64_t seq;
	char result[16];
	char *messages; /* "line\n"..., malloc'ed */
};

/* Read the record at @path: 1 when whole ("end" equal to "seq"), 0 when
 * absent, unreadable or half-written. */
static int record_read(const char *path, struct record *r)
{
	char line[1100];
	unsigned long long end = UINT64_MAX;
	size_t len = 0;
	FILE *m, *f = fopen(path, "re");

	memset(r, 0, sizeof(*r));
	if (!f)
		return 0;
	m = open_memstream(&r->messages, &len);
	while (m && fgets(line, sizeof(line), f)) {
		unsigned long long v;

		if (sscanf(line, "pid %llu", &v) == 1)
			r->pid = (uint32_t)v;
		else if (sscanf(line, "seq %llu", &v) == 1)
			r->seq = v;
		else if (sscanf(line, "result %15s", r->result) == 1)
			;
		else if (strncmp(line, "message ", 8) == 0)
			fputs(line + 8, m);
		else if (sscanf(line, "end %llu", &v) == 1)
			end = v;
	}
	fclose(f);
	if (m)
		fclose(m);
	return m && end == r->seq && r->result[0];
}

static void record_free(struct record *r)
{
	free(r->messages);
	r->messages = NULL;
}

/* Wait for a record of daemon @pid other than @before (seq): 1 with it in
 * *@r, 0 after RECORD_WAIT_MS. */
static int record_wait(const char *path, uint32_t pid, uint64_t before, struct record *r)
{
	const struct timespec step = { 0, 20 * 1000000 };

	for (int ms = 0; ms < RECORD_WAIT_MS; ms += 20) {
		if (record_read(path, r) && r->pid == pid && r->seq != before)
			return 1;
		record_free(r);
		nanosleep(&step, NULL);
	}
	return 0;
}

/* The outcome, as text or JSON. */
static int report(const struct ctl *ctl, uint32_t pid, const struct record *r)
{
	bool rejected = strcmp(r->result, "rejected") == 0;

	if (ctl->format != CTL_TEXT) {
		struct json_object *o = json_object_new_object(), *a = json_object_new_array();
		char *save = NULL, *text = strdup(r->messages ? r->messages : "");

		for (char *l = text ? strtok_r(text, "\n", &save) : NULL; l; l = strtok_r(NULL, "\n", &save))
			json_object_array_add(a, json_object_new_string(l));
		free(text);
		json_object_object_add(o, "reload", json_object_new_string(r->result));
		json_object_object_add(o, "pid", json_object_new_uint64(pid));
		json_object_object_add(o, "messages", a);
		ctl_print(ctl, o, true);
	} else if (rejected) {
		ctl_error("clockd (pid %u) rejected the configuration; it keeps the running one:", (unsigned)pid);
		fputs(r->messages ? r->messages : "", stderr);
	} else if (strcmp(r->result, "unchanged") == 0) {
		printf("no change: clockd (pid %u) found the configuration as it runs\n", (unsigned)pid);
	} else {
		printf("clockd (pid %u) reloaded its configuration:\n%s", (unsigned)pid,
		       r->messages ? r->messages : "");
	}
	return rejected ? CTL_EXIT_REJECTED : CTL_EXIT_OK;
}

int verb_reload(const struct ctl *ctl, int argc, char **argv)
{
	struct clockd_status st;
	struct record before, after;
	char path[sizeof(st.page_path) + sizeof(RECORD_SUFFIX)];
	bool tell;
	int rc;

	(void)argc;
	(void)argv;
	if (clockd_status(&st, sizeof(st)) < 0) {
		ctl_error("clockd_status: %s", ctl_strerror(errno));
		return CTL_EXIT_DAEMON;
	}
	if (st.state != CLOCKD_STATE_LIVE && st.state != CLOCKD_STATE_STALE) {
		ctl_error("no daemon to reload: the page says %s", clockd_state_name(st.state));
		return CTL_EXIT_DAEMON;
	}
	if (st.pid == 0 || !daemon_pid_is_clockd(st.pid)) {
		ctl_error("pid %u of the page is not a clockd process", (unsigned)st.pid);
		return CTL_EXIT_DAEMON;
	}
	snprintf(path, sizeof(path), "%s%s", st.page_path, RECORD_SUFFIX);
	/* A daemon that keeps a record has written one at its start. */
	tell = record_read(path, &before) && before.pid == st.pid;
	record_free(&before);
	if (kill((pid_t)st.pid, SIGHUP) < 0) {
		/* kill(2)'s rule: the group clockd does not help here. */
		ctl_error("cannot signal clockd (pid %u): %s", (unsigned)st.pid,
			  errno == EPERM ? "permission denied: run as root or as the daemon's user"
					 : strerror(errno));
		return CTL_EXIT_DAEMON;
	}
	if (!tell) {
		if (ctl->format != CTL_TEXT) {
			struct json_object *o = json_object_new_object();

			json_object_object_add(o, "reload", json_object_new_string("requested"));
			json_object_object_add(o, "pid", json_object_new_uint64(st.pid));
			ctl_print(ctl, o, true);
		} else {
			printf("reload requested from clockd (pid %u); its log tells the outcome "
			       "(no reload record %s)\n", (unsigned)st.pid, path);
		}
		return CTL_EXIT_OK;
	}
	if (!record_wait(path, st.pid, before.seq, &after)) {
		ctl_error("clockd (pid %u) did not record the reload's outcome within %d s; see its log",
			  (unsigned)st.pid, RECORD_WAIT_MS / 1000);
		return CTL_EXIT_DAEMON;
	}
	rc = report(ctl, st.pid, &after);
	record_free(&after);
	return rc;
}
