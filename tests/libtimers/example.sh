#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# examples/libevent-timers against a private daemon: kernel-flavoured and
# POSIX timers (function and fd notification) run in a libevent loop
# through clockd_fd() and clockd_dispatch(), until 200 expiries.
: "${top_builddir:?run from make check (top_builddir unset)}"
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/clockd.sh"
T=$(mktemp -d "${TMPDIR:-/tmp}/clockd-example.XXXXXX") || exit 99
cleanup() { stop_daemon KILL; rm -rf "$T"; }
trap cleanup EXIT
export CLOCKD_SHM=$T/page CLOCKD_SOCKET=$T/ctl

clockd_start "$T/log" -o page="$T/page" -o control_socket="$T/ctl" -o hz=1000
poll 10 clockd_serving "$T/page" "$T/ctl" || { show_log "$T/log"; bail "clockd did not come up"; }
out=$("$top_builddir/examples/libevent-timers" 200)
ok $? "libevent-timers: 200 expiries of each kind of timer" "$out"
diag "$out"
finish
