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

# start_daemon LOG [-o KEY=VALUE]...: start clockd on $CLOCKD_SHM, wait
# until it is live (10 s). Returns non-zero (and shows its log) if not,
# the daemon killed. Its output goes to LOG alone: a daemon holding the
# test's stdout would keep the TAP driver waiting after the test ended.
start_daemon() {
	log=$1
	shift
	"$CLOCKD" -o page="$CLOCKD_SHM" "$@" >"$log" 2>&1 &
	daemon_pid=$!
	if ! "$PROBE" live 10; then
		sed 's/^/# clockd: /' "$log"
		stop_daemon KILL
		return 1
	fi
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
