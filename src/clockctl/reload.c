/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * clockctl reload: ask the daemon to re-read its configuration, as
 * `systemctl reload clockd` does: SIGHUP to the pid the page names. A
 * signal rather than a control-socket message because reload is an
 * administrator's act: kill(2)'s rule (root, or the daemon's own user) is
 * the permission check, with no new protocol message to guard. The daemon
 * logs the outcome (applied, needs a restart, or rejected with FILE:LINE
 * errors and the running configuration kept).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

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

int verb_reload(const struct ctl *ctl, int argc, char **argv)
{
	struct clockd_status st;

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
	if (kill((pid_t)st.pid, SIGHUP) < 0) {
		/* kill(2)'s rule: the group clockd does not help here. */
		ctl_error("cannot signal clockd (pid %u): %s", (unsigned)st.pid,
			  errno == EPERM ? "permission denied: run as root or as the daemon's user"
					 : strerror(errno));
		return CTL_EXIT_DAEMON;
	}
	if (ctl->format != CTL_TEXT) {
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "reload", json_object_new_string("requested"));
		json_object_object_add(o, "pid", json_object_new_uint64(st.pid));
		ctl_print(ctl, o, true);
	} else {
		printf("reload requested from clockd (pid %u); its log tells the outcome\n", (unsigned)st.pid);
	}
	return CTL_EXIT_OK;
}
