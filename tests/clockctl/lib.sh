# SPDX-License-Identifier: LGPL-2.1-or-later
# Shared by the clockctl tests (sourced, not run): TAP output, a private
# temp dir, running clockctl with its output captured, a daemon on a
# private page.
set -u

: "${top_srcdir:?run from make check (top_srcdir unset)}"
: "${top_builddir:?run from make check (top_builddir unset)}"
CLOCKCTL=$top_builddir/src/clockctl/clockctl
CLOCKD=$top_builddir/src/clockd/clockd
DEADLINE_S=10
. "$top_srcdir/tests/tap.sh"


tmp=$(mktemp -d "${TMPDIR:-/tmp}/clockctl-test.XXXXXX") || bail "mktemp failed"
daemon_pid=

cleanup() {
	if [ -n "$daemon_pid" ]; then
		kill -CONT "$daemon_pid" 2>/dev/null
		kill -TERM "$daemon_pid" 2>/dev/null
		wait "$daemon_pid" 2>/dev/null
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT

# run ARGS...: run clockctl; its status in $rc, stdout in $tmp/out,
# stderr in $tmp/err.
run() {
	"$CLOCKCTL" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
}

# show: the last run's output as TAP diagnostics (after a failure).
show() {
	diag "exit status $rc" "stdout:"
	diag "$(cat "$tmp/out")"
	diag "stderr:"
	diag "$(cat "$tmp/err")"
}

# check CONDITION-STATUS DESCRIPTION: ok, and show the last run on failure.
check() {
	ok "$1" "$2"
	[ "$1" -eq 0 ] || show
}

# One line on stderr, "clockctl: ...".
one_error_line() {
	[ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q '^clockctl: ' "$tmp/err"
}

now_s() {
	date +%s
}

# wait_for SECONDS COMMAND...: poll COMMAND until it succeeds.
wait_for() {
	limit=$(($(now_s) + $1))
	shift
	while ! "$@"; do
		[ "$(now_s)" -le "$limit" ] || return 1
		sleep 0.05
	done
}

# start_daemon ARGS...: clockd on $tmp/page; logs in $tmp/daemon.log. As
# root its tick thread runs at SCHED_FIFO (the default), so that make
# check -j2 cannot starve it into a stale page (see tests/daemon/common.sh).
start_daemon() {
	prio=
	# shellcheck disable=SC2086 # $prio is empty or two words
	"$CLOCKD" -o page="$tmp/page" $prio "$@" 2>"$tmp/daemon.log" &
	daemon_pid=$!
}

status_is() { # status_is EXIT-STATUS: `clockctl status` exits with it
	"$CLOCKCTL" --page "$tmp/page" status >/dev/null 2>&1
	[ $? -eq "$1" ]
}
