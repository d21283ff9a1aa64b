#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The live daemon's tick accounting: at each HZ, every published jiffies_64
# is exactly jiffies_base + tick_index(coarse monotonic - epoch), clockd_hz()
# is HZ, and jiffies strictly increase; out-of-range HZ is refused.
. "$top_srcdir/tests/daemon/common.sh"

# run_hz HZ SNAPSHOTS [-o KEY=VALUE]...
run_hz() {
	hz=$1
	n=$2
	shift 2
	rm -f "$CLOCKD_SHM"
	if start_daemon "$T/log.$hz" -o hz="$hz" "$@"; then
		"$PROBE" ticks "$hz" "$n"
		st=$?
		[ $st -eq 0 ] || show_log "$T/log.$hz"
		ok $st "hz=$hz: $n snapshots, jiffies exact, clockd_hz() $hz, strictly increasing"
	else
		ok 1 "hz=$hz: daemon did not come up"
	fi
	stop_daemon TERM
}

for hz in 24 100 250 1000 1024 1200; do
	run_hz "$hz" 300
done
# The extremes: a tick a second, and one every 10 us (which this machine
# may not keep up with; only the relation is asserted). That one runs at
# SCHED_OTHER: a FIFO thread trying to keep 100 kHz would hold a CPU.
run_hz 1 4
run_hz 100000 300 -o tick_priority=0

for hz in 0 100001 abc; do
	rm -f "$CLOCKD_SHM"
	"$CLOCKD" -o page="$CLOCKD_SHM" -o hz=$hz 2>"$T/err"
	st=$?
	sed 's/^/# /' "$T/err"
	[ "$st" -ne 0 ] && grep -q "hz" "$T/err" && { [ $hz = abc ] || grep -q "1\.\.100000" "$T/err"; } &&
		[ ! -e "$CLOCKD_SHM" ]
	if [ $hz = abc ]; then what="says it is not a number"; else what="gives the range 1..100000"; fi
	ok $? "hz=$hz: refused at start (exit $st), the message names hz and $what, no page made"
done
finish
