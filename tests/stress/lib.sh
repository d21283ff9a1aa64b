# SPDX-License-Identifier: LGPL-2.1-or-later
# Shared by the stress shell tests (sourced after `set -u`): the programs,
# TAP's ok, a private directory $T removed on exit with the daemon ($pid)
# and the holders ($hold, $hold2) still running, the skip for tests that
# need root and a user nobody, and waiting for a daemon to serve.
: "${top_builddir:?run from make check (top_builddir unset)}"
HOLD=$top_builddir/tests/stress/holdconn
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/clockd.sh"
pid= hold= hold2=

# need_root_and_nobody WHY: skip the whole test (TAP plan 1..0) unless run
# as root with setpriv and a user nobody; WHY says what root is for.
need_root_and_nobody() {
	if [ "$(id -u)" -ne 0 ]; then
		skip_all "needs root ($1)"
	fi
	if ! command -v setpriv >/dev/null 2>&1 || ! id nobody >/dev/null 2>&1; then
		skip_all "needs setpriv (util-linux) and a user nobody"
	fi
	NOBODY_UID=$(id -u nobody)
	NOBODY_GID=$(id -g nobody)
}
as_nobody() { setpriv --reuid="$NOBODY_UID" --regid="$NOBODY_GID" --clear-groups "$@"; }

# private_dir NAME: $T, removed on exit (cleanup_more, if a test defines
# it, runs first); CLOCKD_SHM and CLOCKD_SOCKET point into it.
private_dir() {
	T=$(mktemp -d "${TMPDIR:-/tmp}/clockd-$1.XXXXXX") || exit 99
	trap cleanup EXIT
	export CLOCKD_SHM=$T/page CLOCKD_SOCKET=$T/control
}
cleanup() {
	[ -n "$hold" ] && kill "$hold" 2>/dev/null
	[ -n "$hold2" ] && kill "$hold2" 2>/dev/null
	[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	command -v cleanup_more >/dev/null 2>&1 && cleanup_more
	rm -rf "$T"
}

live() { clockd_live "$CLOCKD_SHM"; }

# serving: until the daemon's page is live and its control socket is there
# (10 s); true if so, else its log ($T/log) is shown.
serving() {
	poll 10 clockd_serving "$CLOCKD_SHM" "$CLOCKD_SOCKET" && return 0
	show_log "$T/log"
	return 1
}

# start_clockd: clockd on $T/page, its log in $T/log and its pid in $pid,
# on its defaults (as root the tick and timer threads at SCHED_FIFO, as in
# every daemon test); the whole test fails and ends here if it does not
# come up serving. $prio: extra options for every daemon (none).
start_clockd() {
	prio=
	# shellcheck disable=SC2086 # $prio is empty or two words
	clockd_start "$T/log" -o page="$T/page" $prio
	pid=$daemon_pid
	if ! serving; then
		fail "clockd starts"
		finish
	fi
}
