# SPDX-License-Identifier: LGPL-2.1-or-later
# Shared by the clockctl tests (sourced, not run): TAP output, a private
# temp dir, running clockctl with its output captured, a daemon on a
# private page.
set -u

: "${top_srcdir:?run from make check (top_srcdir unset)}"
: "${top_builddir:?run from make check (top_builddir unset)}"
DEADLINE_S=10
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/clockd.sh"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/clockctl-test.XXXXXX") || bail "mktemp failed"

cleanup() {
	[ -z "$daemon_pid" ] || kill -CONT "$daemon_pid" 2>/dev/null
	stop_daemon TERM
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

# start_daemon ARGS...: clockd on $tmp/page; logs in $tmp/daemon.log. As
# root its tick thread runs at SCHED_FIFO (the default), so that make
# check -j2 cannot starve it into a stale page (see tests/daemon/common.sh).
start_daemon() {
	prio=
	# shellcheck disable=SC2086 # $prio is empty or two words
	clockd_start "$tmp/daemon.log" -o page="$tmp/page" $prio "$@"
}

status_is() { # status_is EXIT-STATUS: `clockctl status` exits with it
	"$CLOCKCTL" --page "$tmp/page" status >/dev/null 2>&1
	[ $? -eq "$1" ]
}
