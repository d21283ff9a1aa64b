#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# clockd_clock_nanosleep and the delays (tests/sleep/sleep.c) against a
# daemon on the TSC, then on the sim device running 1 % fast and 1 % slow
# (the clockd clock then runs at another rate than the kernel's: a sleep
# handed to the kernel whole would end early on the slow one), and with no
# daemon at all.
. "$top_srcdir/tests/daemon/common.sh"
SLEEP=$top_builddir/tests/sleep/sleep

# run_case NAME [-o KEY=VALUE]...: the whole C test against such a daemon;
# its TAP lines are folded into ours as one check per case.
run_case() {
	name=$1
	shift
	if ! start_daemon "$T/$name.log" "$@"; then
		ok 1 "$name: daemon started"
		return
	fi
	"$SLEEP" all >"$T/$name.tap" 2>&1
	rc=$?
	sed 's/^/# /' "$T/$name.tap"
	ok $rc "$name: every sleep and delay check ($(grep -c '^ok' "$T/$name.tap") ok, $(grep -c '^not ok' "$T/$name.tap") not ok)"
	stop_daemon TERM
}

run_case tsc -o hz=1000
run_case sim-fast -o hz=1000 -o source=sim -o sim_rate_ppm=10000
run_case sim-slow -o hz=250 -o source=sim -o sim_rate_ppm=-10000
CLOCKD_SHM=$T/nowhere "$SLEEP" nodaemon >"$T/nodaemon.tap" 2>&1
rc=$?
sed 's/^/# /' "$T/nodaemon.tap"
ok $rc "no daemon: ENOENT, the fallback, delays on the kernel clock"
finish
