# SPDX-License-Identifier: LGPL-2.1-or-later
# Shared by the daemon shell tests: a private directory, daemons started
# on a page in it and killed on exit, and TAP output.

: "${top_builddir:?run from make check (top_builddir unset)}"
. "$top_srcdir/tests/tap.sh"
CLOCKD=$top_builddir/src/clockd/clockd
PROBE=$top_builddir/tests/daemon/probe
T=$(mktemp -d "${TMPDIR:-/tmp}/clockd-test.XXXXXX") || exit 99
export CLOCKD_SHM=$T/page
daemon_pid=
# As root the tick thread runs at SCHED_FIFO by default (tick_priority 40,
# above the timer threads' 30): with SCHED_OTHER, make check -j2 under ASan
# has kept it off both CPUs past the stale limit, and a test's reads then
# failed with ESTALE, rightly (hz.sh once in CI, and flood.sh and libtimers
# before). A test that wants SCHED_OTHER passes -o tick_priority=0.
# $tick_prio: extra options for that (none: the defaults do it).
tick_prio=

cleanup() {
	if [ -n "$daemon_pid" ]; then
		kill -9 "$daemon_pid" 2>/dev/null
		wait "$daemon_pid" 2>/dev/null
	fi
	rm -rf "$T"
}
trap cleanup EXIT

# start_daemon LOG [-o KEY=VALUE]...: start clockd on $CLOCKD_SHM (and
# $tick_prio), wait until it is live (10 s). Returns non-zero (and shows
# its log) if not, the daemon killed. Its output goes to LOG alone: a daemon holding the
# test's stdout would keep the TAP driver waiting after the test ended.
start_daemon() {
	log=$1
	shift
	# shellcheck disable=SC2086 # $tick_prio is empty or two words
	"$CLOCKD" -o page="$CLOCKD_SHM" $tick_prio "$@" >"$log" 2>&1 &
	daemon_pid=$!
	if ! "$PROBE" live 10; then
		show_log "$log"
		stop_daemon KILL
		return 1
	fi
}

# show_log LOG: the daemon's log as TAP comments (after a failed check).
show_log() {
	sed 's/^/# clockd: /' "$1"
}

# stop_daemon SIGNAL: signal the daemon and reap it.
stop_daemon() {
	[ -n "$daemon_pid" ] || return 0
	kill "-$1" "$daemon_pid" 2>/dev/null
	wait "$daemon_pid" 2>/dev/null
	daemon_pid=
}

