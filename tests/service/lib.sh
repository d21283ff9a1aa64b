# SPDX-License-Identifier: LGPL-2.1-or-later
# Shared by the service tests (sourced, not run): TAP output, a private
# temp dir, daemons started in it and killed at exit, polling helpers.
set -u

: "${top_srcdir:?run from make check (top_srcdir unset)}"
: "${top_builddir:?run from make check (top_builddir unset)}"
LISTEN=$top_builddir/tests/service/notify-listen
DEADLINE_S=10

. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/clockd.sh"

for f in "$CLOCKD" "$CLOCKCTL" "$LISTEN"; do
	[ -x "$f" ] || bail "$f is not built"
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/clockd-service.XXXXXX") || bail "mktemp failed"
pids=
cleanup() {
	for p in $pids; do
		kill -TERM "$p" 2>/dev/null
	done
	for p in $pids; do
		wait "$p" 2>/dev/null
	done
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM
unset NOTIFY_SOCKET WATCHDOG_USEC WATCHDOG_PID LISTEN_FDS LISTEN_PID LISTEN_FDNAMES JOURNAL_STREAM \
	CLOCKD_FALLBACK CLOCKD_SOCKET
export CLOCKD_SHM="$tmp/page"

page_live() { "$CLOCKCTL" status >/dev/null 2>&1; }
# has FILE PATTERN: FILE has a line matching the extended regex
has() { grep -Eq -- "$2" "$1"; }
