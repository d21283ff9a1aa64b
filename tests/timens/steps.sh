#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Steps of the date (issue 25 item 2): relative realtime sleeps and timers
# measure elapsed time, so a 6 s one lasts 6 s across a +3 s and a -3 s
# step of CLOCKD_REALTIME, through libclockd and under the preload (whose
# CLOCK_REALTIME is clockd's, so the program sees the step); and a step
# back does not hold the other timers of the process: a 10 ms periodic
# monotonic timer stays on time while an absolute realtime one on the
# same CPU is handed over early (the daemon's lead) across a -5 s step.
# The daemon alone sees the steps: tests/daemon/trap-preload.c shifts its
# CLOCK_REALTIME by the ns in a file; the machine's clock is not touched.
. "$top_srcdir/tests/daemon/common.sh"

TRAP=$top_builddir/tests/daemon/.libs/trap-preload.so
CLOCKCTL=$top_builddir/src/clockctl/clockctl
TPROBE=$top_builddir/tests/timens/tprobe
[ -f "$TRAP" ] || bail "$TRAP not built"
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
export CLOCKD_TEST_REALTIME_OFFSET="$T/offset"
echo 0 >"$T/offset"
SPAN_MS=6000
# The target is 50 ms (and 10 ms for the -5 s step below), met on a quiet
# machine (6000.0-6006.6 ms, 1.1 ms); a loaded one wakes threads later
# (300 ms, and 570 ms for the 10 ms timer, at a load average of 16), so
# the test asserts "never early, at most LATE_MS late", which a step
# (3 s early or late, 3.5-5 s held) still fails, and prints every figure.
LATE_MS=1500
HELD_MS=2000

# step NS SECS: after SECS s, the daemon's realtime moves to offset NS
step_after() {
	sleep "$2"
	echo "$1" >"$T/offset"
}

# check LABEL FILE NAME...: each wait NAME of FILE lasted SPAN_MS
check() {
	lbl=$1 file=$2
	shift 2
	for w in "$@"; do
		e=$(awk -v w="$w" '$1 == w && NF == 2 { print $2 }' "$file")
		if [ -z "$e" ]; then
			ok 1 "$lbl: $w ended ($(grep "^$w " "$file"))"
			continue
		fi
		ms=$(awk -v e="$e" 'BEGIN { printf "%.1f", e / 1e6 }')
		[ "$e" -ge $((SPAN_MS * 1000000 - 1000000)) ] && [ "$e" -le $(((SPAN_MS + LATE_MS) * 1000000)) ]
		ok $? "$lbl: $w lasted $ms ms (wanted $SPAN_MS)"
	done
}

export LD_PRELOAD="$TRAP"
start_daemon "$T/log" -o timer_lead_ns=1000000 -o timer_lead_other_ns=1000000 || { unset LD_PRELOAD; ok 1 "start"; finish; }
unset LD_PRELOAD

for s in 3000000000:+3 0:-3; do
	to=${s%%:*} label="step ${s#*:} s"
	"$TPROBE" waits $SPAN_MS >"$T/lib" &
	p1=$!
	CLOCKD_PRELOAD=refuse "$CLOCKCTL" --page "$CLOCKD_SHM" run -- "$TPROBE" waits $SPAN_MS >"$T/pre" 2>"$T/err" &
	p2=$!
	step_after "$to" 1.5
	wait $p1
	ok $? "$label: libclockd: every wait ended"
	wait $p2
	ok $? "$label: preloaded: every wait ended$(head -1 "$T/err")"
	check "$label: libclockd" "$T/lib" clockd-timer-real-rel clockd-sleep-real-rel clockd-timer-real-periodic \
		clockd-timer-mono-rel clockd-sleep-mono-rel
	check "$label: preloaded" "$T/pre" timer-real-rel sleep-real-rel nanosleep timer-mono-rel
done

# A step back while the delivery thread waits out the lead of an absolute
# realtime timer (1 ms period, lead 1 ms: nearly always). The probe runs
# SCHED_FIFO where it may: a real-time delivery thread spins out the end
# of the lead (a SCHED_OTHER one sleeps it out; both leads are 1 ms).
rt=
if chrt -f 10 true 2>/dev/null; then rt="chrt -f 10"; else echo "# no SCHED_FIFO here: the probe sleeps out the lead"; fi
$rt "$TPROBE" late 4 >"$T/late" &
p1=$!
step_after -5000000000 1.5
wait $p1
ok $? "step -5 s: the probe ran ($(tr '\n' ' ' <"$T/late"))"
late=$(awk '$1 == "late_max" { print $2 }' "$T/late")
[ -n "$late" ] && [ "$late" -le $((HELD_MS * 1000000)) ]
ok $? "step -5 s: the 10 ms monotonic timer was never late by more than $HELD_MS ms (max $(awk -v e="${late:-0}" 'BEGIN { printf "%.2f", e / 1e6 }') ms)"
grep -q "system time was stepped" "$T/log"
ok $? "the daemon saw the steps"
stop_daemon TERM
finish
