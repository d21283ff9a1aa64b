# SPDX-License-Identifier: LGPL-2.1-or-later
# Shared by the daemon shell tests: a private directory, daemons started
# on a page in it and killed on exit, and TAP output.

: "${top_builddir:?run from make check (top_builddir unset)}"
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/clockd.sh"
PROBE=$top_builddir/tests/daemon/probe
T=$(mktemp -d "${TMPDIR:-/tmp}/clockd-test.XXXXXX") || exit 99
export CLOCKD_SHM=$T/page
# As root the tick thread runs at SCHED_FIFO by default (tick_priority 40,
# above the timer threads' 30): with SCHED_OTHER, make check -j2 under ASan
# has kept it off both CPUs past the stale limit, and a test's reads then
# failed with ESTALE, rightly (hz.sh once in CI, and flood.sh and libtimers
# before). A test that wants SCHED_OTHER passes -o tick_priority=0.
# $tick_prio: extra options for that (none: the defaults do it).
tick_prio=

cleanup() {
	stop_daemon KILL
	rm -rf "$T"
}
trap cleanup EXIT

# start_daemon LOG [-o KEY=VALUE]...: start clockd on $CLOCKD_SHM (and
# $tick_prio), wait until it is live (10 s). Returns non-zero (and shows
# its log) if not, the daemon killed.
start_daemon() {
	log=$1
	shift
	# shellcheck disable=SC2086 # $tick_prio is empty or two words
	clockd_start "$log" -o page="$CLOCKD_SHM" $tick_prio "$@"
	if ! poll 10 clockd_live "$CLOCKD_SHM"; then
		show_log "$log"
		stop_daemon KILL
		return 1
	fi
}

