#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# examples/libevent-timers against a private daemon: kernel-flavoured and
# POSIX timers (function and fd notification) run in a libevent loop
# through clockd_fd() and clockd_dispatch(), until 200 expiries.
: "${top_builddir:?run from make check (top_builddir unset)}"
. "$top_srcdir/tests/tap.sh"
T=$(mktemp -d "${TMPDIR:-/tmp}/clockd-example.XXXXXX") || exit 99
pid=
cleanup() { [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
export CLOCKD_SHM=$T/page CLOCKD_SOCKET=$T/ctl

"$top_builddir/src/clockd/clockd" -o page="$T/page" -o control_socket="$T/ctl" -o hz=1000 2>"$T/log" &
pid=$!
i=0
until [ -S "$T/ctl" ]; do
	i=$((i + 1))
	if [ $i -gt 100 ] || ! kill -0 "$pid" 2>/dev/null; then
		sed 's/^/# clockd: /' "$T/log"
		bail "clockd did not come up"
	fi
	sleep 0.1
done
out=$("$top_builddir/examples/libevent-timers" 200)
ok $? "libevent-timers: 200 expiries of each kind of timer" "$out"
diag "$out"
finish
