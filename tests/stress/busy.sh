#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Both CPUs saturated by SCHED_OTHER busy loops for 60 s (BUSY_S), beside
# a daemon whose tick thread is SCHED_OTHER too (the hardest case): four
# readers of the fine clocks never fail and never go backward, because a
# starved daemon is extrapolated, not stale (issue #15).
. "$top_srcdir/tests/daemon/common.sh"

start_daemon "$T/log" -o tick_priority=0 -o timer_priority=0 || { ok 1 "the daemon starts"; finish; }
"$top_builddir/tests/daemon/stall" --busy "${BUSY_S:-60}"
rc=$?
[ $rc -eq 0 ] || show_log "$T/log"
stop_daemon TERM
exit $rc
