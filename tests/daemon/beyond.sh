#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Past the extrapolation bound (extrapolate_max_s = 1): a daemon stopped
# for 1.6 s leaves the fine reads failing with ESTALE, and only with
# ESTALE, and they succeed again once it runs (tests/daemon/stall.c).
. "$top_srcdir/tests/daemon/common.sh"

start_daemon "$T/log" -o hz=1000 -o extrapolate_max_s=1 || { ok 1 "the daemon starts"; finish; }
"$top_builddir/tests/daemon/stall" --beyond "$daemon_pid" 1600
rc=$?
[ $rc -eq 0 ] || show_log "$T/log"
stop_daemon TERM
exit $rc
