# SPDX-License-Identifier: LGPL-2.1-or-later
# Starting, polling and stopping a clockd in the shell tests (sourced,
# never run; the libraries of tests/daemon, clockctl, service and stress
# use it, and through them every daemon test).
#
#   clockd_start LOG ARG...   clockd ARG... in the background, its stdout
#                             and stderr into LOG; its pid in $daemon_pid
#   stop_daemon [SIGNAL]      signal $daemon_pid (TERM) and reap it; its
#                             exit status
#   poll SECONDS COMMAND...   COMMAND every 0.1 s until it succeeds (0) or
#                             SECONDS of tries pass (1): on a loaded
#                             machine the tries take longer, never fewer
#   clockd_live PAGE          clockctl calls the daemon of PAGE live
#   clockd_serving PAGE SOCK  ... and its control socket SOCK is there
#   show_log LOG              LOG as TAP comments ("# clockd: ...")
#   threads_sched PID PREFIX  the distinct "policy/priority" (1: SCHED_FIFO)
#                             of PID's threads named PREFIX*, one line
#                             each, nothing while there is no such thread
: "${top_builddir:?run from make check (top_builddir unset)}"
CLOCKD=$top_builddir/src/clockd/clockd
CLOCKCTL=$top_builddir/src/clockctl/clockctl
daemon_pid=

# Both streams go to LOG: a daemon holding the test's stdout would keep
# the TAP driver waiting after the test ended.
clockd_start() {
	clockd_start_log=$1
	shift
	"$CLOCKD" "$@" >"$clockd_start_log" 2>&1 &
	daemon_pid=$!
}

stop_daemon() {
	[ -n "$daemon_pid" ] || return 0
	kill "-${1:-TERM}" "$daemon_pid" 2>/dev/null
	wait "$daemon_pid" 2>/dev/null
	stop_daemon_status=$?
	daemon_pid=
	return $stop_daemon_status
}

poll() {
	poll_tries=$(($1 * 10))
	shift
	until "$@"; do
		poll_tries=$((poll_tries - 1))
		[ "$poll_tries" -gt 0 ] || return 1
		sleep 0.1
	done
}

clockd_live() {
	"$CLOCKCTL" --page "$1" status >/dev/null 2>&1
}

clockd_serving() {
	clockd_live "$1" && [ -S "$2" ]
}

show_log() {
	sed 's/^/# clockd: /' "$1"
}

threads_sched() {
	for threads_sched_t in /proc/"$1"/task/*; do
		case $(cat "$threads_sched_t/comm" 2>/dev/null) in
		"$2"*) awk '{ print $41 "/" $40 }' "$threads_sched_t/stat" 2>/dev/null ;;
		esac
	done | sort -u
}
