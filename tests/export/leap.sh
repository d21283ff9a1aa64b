#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The kernel's leap second state, followed by the daemon and published:
# the page (clockctl status/tracking), the NTP SHM and chrony SOCK leap
# fields, and an inserted leap second across midnight: the TAI offset moves
# with the repeat of CLOCKD_REALTIME's second. Nothing touches the machine's
# clock: the LD_PRELOAD trap of tests/daemon makes the daemon's adjtimex()
# answer the leap state and TAI offset of a file, and shifts its
# CLOCK_REALTIME to just before a midnight UTC (and steps it back a second
# after, as the kernel does at an inserted leap second).
. "$top_srcdir/tests/export/lib.sh"

preload=$top_builddir/tests/daemon/.libs/trap-preload.so
CLOCKCTL=$top_builddir/src/clockctl/clockctl
[ -f "$preload" ] || { echo "Bail out! $preload not built"; exit 99; }
command -v jq >/dev/null || { echo "1..0 # SKIP jq is not installed"; exit 0; }
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
export CLOCKD_TEST_REALTIME_OFFSET="$T/offset"
export CLOCKD_TEST_ADJTIMEX="$T/adjtimex"
free_unit 120 139 || exit 99
sock=$T/chrony.sock

# The next midnight UTC, s, and the daemon's realtime put AT ns from it.
now_ns() { date +%s%N; }
# CLOCKD_TAI - CLOCKD_MONOTONIC, ms (rounded), from one clockctl time
tai_mono_ms() {
	"$CLOCKCTL" --page "$CLOCKD_SHM" --json time |
		jq -r '(.tai.sec - .monotonic.sec) * 1000 + (.tai.nsec - .monotonic.nsec) / 1000000 | round'
}
midnight=$(( ($(date +%s) / 86400 + 2) * 86400 ))
put_realtime() { off=$(( midnight * 1000000000 + $1 - $(now_ns) )); echo "$off" >"$T/offset"; }
status() { "$CLOCKCTL" --page "$CLOCKD_SHM" --json status | jq -r "$1"; }
# wait_status JQ VALUE: status' JQ is VALUE within 10 s
wait_status() { poll 10 sh -c "[ \"\$(\"$CLOCKCTL\" --page \"$CLOCKD_SHM\" --json status | jq -r '$1')\" = '$2' ]"; }

put_realtime -3600000000000
echo "0 37 0" >"$T/adjtimex"
export LD_PRELOAD="$preload"
start_daemon "$T/log" -o source=posix -o posix_clock=monotonic -o tick=timerfd -o hz=250 \
	-o ntp_shm_unit="$unit" -o chrony_sock="$sock" || { unset LD_PRELOAD; ok 1 "start"; finish; }
unset LD_PRELOAD

wait_status '.leap + " " + (.tai_offset | tostring)' "none 37"
ok $? "status: leap none, TAI offset 37 s (the kernel's)"

echo "16 37 1" >"$T/adjtimex"   # STA_INS, TIME_INS
wait_status '.leap' insert
ok $? "STA_INS: status says a second is inserted at the end of the day"
"$CLOCKCTL" --page "$CLOCKD_SHM" status | grep -q "leap: insert a second at the end of the UTC day, TAI offset 37 s"
ok $? "... in the text report too"
[ "$("$CLOCKCTL" --page "$CLOCKD_SHM" --json tracking | jq -r '.leap + " " + (.tai_offset | tostring)')" = "insert 37" ]
ok $? "... and in tracking's"
r=$("$EXPTOOL" read "$unit" 10 1)
ok $? "NTP SHM: leap 1 (LEAP_ADDSECOND): $r"
r=$("$EXPTOOL" recv "$sock" 10 1)
ok $? "chrony SOCK: leap 1 (LEAP_InsertSecond): $r"

# Midnight: the daemon's realtime 4 s before it, and the trap inserts
# the leap second at midnight itself (realtime back a second), whenever
# the test gets to look; the kernel's state after it (TAI offset 38) is
# written once the daemon's realtime is inside LEAP_WINDOW_NS (5 s) of
# midnight, where the daemon no longer reads the kernel's state.
put_realtime -4000000000
echo "$off $midnight" >"$T/offset"
poll 10 sh -c "[ \$(\"$CLOCKCTL\" --page \"$CLOCKD_SHM\" --json time | jq -r '.realtime.sec') -ge $((midnight - 5)) ]"
ok $? "CLOCKD_REALTIME reaches the last seconds of the day"
tai_before=$(status '.tai_offset')
d0=$(tai_mono_ms)
# STA_INS stays set (nobody withdraws it); TIME_ERROR: an unsynchronised
# kernel clock hides its TIME_WAIT. The daemon must not announce another.
echo "16 38 5" >"$T/adjtimex"
poll 10 grep -q "leap second inserted at $midnight" "$T/log"
ok $? "the daemon saw the leap second: $(grep 'leap second inserted' "$T/log")"
wait_status '.leap + " " + (.tai_offset | tostring)' "none 38"
ok $? "after it: no leap announced, TAI offset 38 s (was $tai_before)"
sleep 7  # past the 5 s window: the kernel's state is read again
[ "$(status '.leap')" = none ]
ok $? "... nor a new one while the kernel keeps STA_INS set (its TIME_WAIT)"
# (The repeated second is over before a loaded machine can look at it.)
grep -Eq "leap second inserted at $midnight: CLOCKD_REALTIME stepped by -(99999|100000)[0-9]{4} ns" "$T/log"
ok $? "CLOCKD_REALTIME repeated 23:59:59: stepped back by 1 s at midnight"
d1=$(tai_mono_ms)
[ -n "$d0" ] && [ -n "$d1" ] && [ $((d1 - d0)) -ge -50 ] && [ $((d1 - d0)) -le 50 ]
ok $? "CLOCKD_TAI did not step: CLOCKD_TAI - CLOCKD_MONOTONIC $d0 ms before, $d1 ms after"
"$CLOCKCTL" --page "$CLOCKD_SHM" --json time |
	jq -e '(.tai.sec - .realtime.sec) * 1000 + (.tai.nsec - .realtime.nsec) / 1000000 | round | . >= 37990 and . <= 38010' >/dev/null
ok $? "clockctl time: CLOCKD_TAI is CLOCKD_REALTIME + 38 s"
PTEST=$top_builddir/tests/preload/ptest
LIB=$top_builddir/src/libclockd/.libs/libclockd-preload.so
san=$(ldd "$LIB" | awk '/lib(asan|ubsan)\.so/ { printf "%s:", $3 }')
d=$(ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0" LD_PRELOAD="$san$LIB" "$PTEST" tai)
[ "$d" -ge 37995 ] && [ "$d" -le 38005 ]
ok $? "under libclockd-preload, CLOCK_TAI - CLOCK_REALTIME is clockd's 38 s ($d ms)"
r=$("$EXPTOOL" read "$unit" 10 0)
ok $? "NTP SHM: leap 0 after the leap: $r"

# A deletion, the next day, once the insertion was withdrawn.
put_realtime 3600000000000
echo "0 38 5" >"$T/adjtimex"
sleep 2
echo "32 38 2" >"$T/adjtimex"   # STA_DEL, TIME_DEL
wait_status '.leap' delete
ok $? "STA_DEL: status says a second is deleted at the end of the day"
r=$("$EXPTOOL" read "$unit" 10 2)
ok $? "NTP SHM: leap 2 (LEAP_DELSECOND): $r"
r=$("$EXPTOOL" recv "$sock" 10 2)
ok $? "chrony SOCK: leap 2 (LEAP_DeleteSecond): $r"

echo "0 38 0" >"$T/adjtimex"
wait_status '.leap' none
ok $? "the announcement withdrawn: leap none again"
sed 's/^/# clockd: /' "$T/log"
stop_daemon TERM
finish
