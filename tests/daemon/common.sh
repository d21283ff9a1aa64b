# SPDX-License-Identifier: LGPL-2.1-or-later
# Shared by the daemon shell tests: a private directory, daemons started
# on a page in it and killed on exit, and TAP output.

: "${top_builddir:?run from make check (top_builddir unset)}"
CLOCKD=$top_builddir/src/clockd/clockd
PROBE=$top_builddir/tests/daemon/probe
T=$(mktemp -d "${TMPDIR:-/tmp}/clockd-test.XXXXXX") || exit 99
export CLOCKD_SHM=$T/page
tap_n=0
tap_failed=0
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

# ok CONDITION-STATUS DESCRIPTION
ok() {
	tap_n=$((tap_n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $tap_n - $2"
	else
		echo "not ok $tap_n - $2"
		tap_failed=$((tap_failed + 1))
	fi
}

# skip DESCRIPTION REASON: a check this run cannot make, and why.
skip() {
	tap_n=$((tap_n + 1))
	echo "ok $tap_n - $1 # SKIP $2"
}

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

finish() {
	echo "1..$tap_n"
	[ "$tap_failed" -eq 0 ]
	exit $?
}
