#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The discipline given a bad reference, against the simulated 1 PPS: one
# that runs 2000 ppm off (beyond discipline_max_ppm), and one that jumps
# 200 ms after the lock (beyond discipline_step_ms), slewed or, with
# discipline_restep_ms, stepped. Each is reported once in the log, and no
# clock ever goes back.
. "$top_srcdir/tests/discipline/common.sh"

# wait_log SECONDS ERE
wait_log() {
	i=0
	until grep -Eq "$2" "$T/clockd.log" || [ $i -ge $(($1 * 10)) ]; do sleep 0.1; i=$((i + 1)); done
	grep -Eq "$2" "$T/clockd.log"
}

# run NAME SECONDS OPTION...: the daemon with a monitor for SECONDS.
run() {
	name=$1 secs=$2
	shift 2
	if ! start_daemon "$T/clockd.log" -o hz=100 -o source=posix -o posix_clock=monotonic \
		-o reference=sim "$@"; then
		ok 1 "$name: the daemon starts"
		return 1
	fi
	"$MONITOR" "$secs" >"$T/monitor" 2>&1 &
	mon=$!
}
end_run() {
	wait $mon
	st=$?
	sed "s/^#/# $name:/" "$T/monitor"
	ok $st "$name: no clock went back"
	grep 'reference sim' "$T/clockd.log" | sed "s/^/# $name: /"
	stop_daemon TERM
}

if run wrong-rate 25 -o sim_rate_ppm=2000; then
	wait_log 25 'reference sim: it runs \+(2000\.0|1999\.9)[0-9]* ppm off clockd.s clock, beyond discipline_max_ppm \(500\)'
	ok $? "wrong-rate: the log says the reference runs 2000 ppm off (within 0.1 ppm), beyond the limit"
	[ "$(grep -c 'beyond discipline_max_ppm' "$T/clockd.log")" -eq 1 ]
	ok $? "wrong-rate: ... once"
	[ "$(field state)" != locked ] && ! "$CLOCKCTL" status | grep -Eq '^ *flags: .*synced'
	ok $? "wrong-rate: never locked, not synced"
	end_run
fi

if run jump-slewed 22 -o "sim_script=12s step +200ms"; then
	wait_log 22 'reference sim: 4 offsets in a row far off the line'
	ok $? "jump-slewed: the jump is seen (outliers, then acquiring again)"
	wait_log 10 'reference sim: offset [-+][0-9]* ns is above discipline_step_ms; slewing'
	ok $? "jump-slewed: the offset above discipline_step_ms is slewed, not stepped, and said so"
	! grep -q 'stepped by' "$T/clockd.log"
	ok $? "jump-slewed: no step"
	end_run
fi

if run jump-stepped 22 -o "sim_script=12s step +200ms" -o discipline_restep_ms=100; then
	wait_log 22 'reference sim: CLOCKD_REALTIME stepped by \+[0-9]* ns \(the offset is above discipline_restep_ms\)'
	ok $? "jump-stepped: with discipline_restep_ms 100 realtime is stepped, and said so"
	wait_state locked 15
	ok $? "jump-stepped: locked again"
	end_run
fi

finish
