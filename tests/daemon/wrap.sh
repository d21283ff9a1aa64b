#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The 32-bit jiffies wrap, 2 s after start at HZ 1000: clockd_jiffies()
# passes through 0 while clockd_get_jiffies_64() crosses 2^32, and the
# time_after family orders values across it.
. "$top_srcdir/tests/daemon/common.sh"

# The watcher starts first so it sees the first published jiffies.
"$PROBE" wrap >"$T/wrap.out" &
probe_pid=$!
# shellcheck disable=SC2086 # $tick_prio: see common.sh
"$CLOCKD" -o page="$CLOCKD_SHM" $tick_prio -o hz=1000 -o jiffies_wrap_after=2 2>"$T/log" &
daemon_pid=$!
wait "$probe_pid"
st=$?
cat "$T/wrap.out"
[ $st -eq 0 ] || show_log "$T/log"
ok $st "jiffies wrap 2^32 -> 0 with jiffies_64 increasing; time_after/_before/after64 order across it"
stop_daemon TERM
finish
