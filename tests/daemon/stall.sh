#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Stale is not gone (issue #15): four readers read the fine clocks, the
# coarse one and jiffies while the daemon is stopped (SIGSTOP) for 300 ms
# and then 3 s, both within its extrapolation bound (10 s by default).
# No fine read fails, nothing goes backward, the clocks keep time through
# the stop, and the first jiffies published after it is time's (see
# tests/daemon/stall.c).
. "$top_srcdir/tests/daemon/common.sh"

start_daemon "$T/log" -o hz=1000 || { ok 1 "the daemon starts"; finish; }
"$top_builddir/tests/daemon/stall" "$daemon_pid" 300 3000
rc=$?
[ $rc -eq 0 ] || show_log "$T/log"
stop_daemon TERM
exit $rc
