#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The system reference (the default) under slews of the kernel's clock: the
# kernel's frequency moved +100 ppm for 8 s, then -100 ppm for 8 s (adjtimex
# ADJ_FREQUENCY, as chronyd does; restored on exit): CLOCKD_REALTIME stays
# within 10 us of CLOCK_REALTIME at every sample, 2 us at the 99th
# percentile, and CLOCKD_MONOTONIC drifts at most 10 us from
# CLOCK_MONOTONIC. (clockd 0.x ran at the counter's rate: -2 ms in 20 s.)
# Then a step of the daemon's view of the system time (the trap preload):
# CLOCKD_REALTIME follows at once, monotonic does not move.
. "$top_srcdir/tests/sysref/common.sh"

[ "$(id -u)" -eq 0 ] || { echo "1..0 # SKIP needs root (adjtimex ADJ_FREQUENCY)"; exit 0; }
lock_clock
freq0=$("$FOLLOW" freq) || { echo "1..0 # SKIP adjtimex cannot be read here"; exit 0; }
"$FOLLOW" setfreq "$freq0" 2>/dev/null || { echo "1..0 # SKIP adjtimex ADJ_FREQUENCY not permitted here"; exit 0; }
restore() {
	"$FOLLOW" setfreq "$freq0"
	cleanup
}
trap restore EXIT
preload=$top_builddir/tests/daemon/.libs/trap-preload.so
[ -f "$preload" ] || { echo "Bail out! $preload not built"; exit 99; }
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
export CLOCKD_TEST_REALTIME_OFFSET="$T/offset"
echo 0 >"$T/offset"

LD_PRELOAD="$preload" start_daemon "$T/log" || { ok 1 "start"; finish; }
wait_state locked 10
ok $? "locked to the system reference ($(field reference))"

"$FOLLOW" -f 100@1 -f -100@9 -f 0@17 18 >"$T/slew" 2>&1
ok $? "sampled through +100 and -100 ppm"
"$FOLLOW" setfreq "$freq0"
check_follow "+-100 ppm" "$T/slew"
[ "$(field state)" = locked ]
ok $? "still locked"

# A step: the daemon's CLOCK_REALTIME +2.5 s (its view only).
d0=$("$CLOCKCTL" --json time | jq -r '.monotonic.diff_ns')
echo 2500000000 >"$T/offset"
sleep 0.3
d=$("$CLOCKCTL" --json time | jq -r '.realtime.diff_ns')
awk -v d="$d" 'BEGIN { exit !(d > 2499990000 && d < 2500010000) }'
ok $? "a +2.5 s step is followed within 0.3 s, to 10 us (clockd - kernel: $d ns)"
d1=$("$CLOCKCTL" --json time | jq -r '.monotonic.diff_ns')
awk -v a="$d0" -v b="$d1" 'BEGIN { x = b - a; exit !(x > -10000 && x < 10000) }'
ok $? "CLOCKD_MONOTONIC does not move ($d0 -> $d1 ns)"
[ "$(field state)" = locked ]
ok $? "still locked after the step"
grep -Eq "system time was stepped by \+(24999|25000)[0-9]{5} ns" "$T/log"
ok $? "the step is logged"
show_log "$T/log" | head -20
stop_daemon TERM
finish
