#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Cross-thread ordering of the clockd clocks against a live daemon (see
# tests/daemon/ordering.c).
. "$top_srcdir/tests/daemon/common.sh"

start_daemon "$T/log" || { echo "1..1"; echo "not ok 1 - the daemon starts"; exit 1; }
"$top_builddir/tests/daemon/ordering"
rc=$?
stop_daemon TERM
exit $rc
