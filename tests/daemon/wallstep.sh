#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# CLOCKD_REALTIME follows steps of the system time (xtime follows the
# clock), forward and back, while CLOCKD_MONOTONIC and jiffies do not move.
# The step is seen by the daemon only: an LD_PRELOAD trap shifts its
# CLOCK_REALTIME by the ns in a file, so the machine's clock is untouched and
# a client compares clockd's realtime with the real kernel's.
. "$top_srcdir/tests/daemon/common.sh"

preload=$top_builddir/tests/daemon/.libs/trap-preload.so
CLOCKCTL=$top_builddir/src/clockctl/clockctl
[ -f "$preload" ] || { echo "Bail out! $preload not built"; exit 99; }
command -v jq >/dev/null || { echo "1..0 # SKIP jq is not installed"; exit 0; }
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
export CLOCKD_TEST_REALTIME_OFFSET="$T/offset"

# diff_ms CLOCK: clockd minus kernel for CLOCK, in whole ms
diff_ms() {
	"$CLOCKCTL" --page "$CLOCKD_SHM" --json time | jq -r ".$1.diff_ns / 1000000 | round"
}
# near CLOCK MS: clockd - kernel is MS within 50 ms, within 5 s of polling
near() {
	i=0
	while :; do
		d=$(diff_ms "$1")
		[ -n "$d" ] && [ "$d" -ge $(($2 - 50)) ] && [ "$d" -le $(($2 + 50)) ] && return 0
		i=$((i + 1)); [ $i -lt 50 ] || { echo "# $1: clockd - kernel = $d ms, wanted $2"; return 1; }
		sleep 0.1
	done
}

export LD_PRELOAD="$preload"
start_daemon "$T/log" -o hz=250 || { unset LD_PRELOAD; ok 1 "start"; finish; }
unset LD_PRELOAD

near realtime 0
ok $? "at start CLOCKD_REALTIME is the kernel's realtime"
j0=$("$CLOCKCTL" --page "$CLOCKD_SHM" --json jiffies | jq .jiffies_64)

echo 5000000000 >"$T/offset"
near realtime 5000
ok $? "the system time steps +5 s: CLOCKD_REALTIME follows"
near realtime_coarse 5000
ok $? "... and so does xtime (CLOCKD_REALTIME_COARSE)"
near monotonic 0
ok $? "CLOCKD_MONOTONIC does not move"

echo -3000000000 >"$T/offset"
near realtime -3000
ok $? "the system time steps back 8 s: CLOCKD_REALTIME follows"
near monotonic 0
ok $? "CLOCKD_MONOTONIC still does not move"
j1=$("$CLOCKCTL" --page "$CLOCKD_SHM" --json jiffies | jq .jiffies_64)
[ "$j1" -gt "$j0" ]
ok $? "jiffies_64 kept counting ($j0 -> $j1)"
grep -Eq "system time was stepped by \+(49999|50000)[0-9]{5} ns" "$T/log"
ok $? "the first step is logged (about +5 s)"
sed 's/^/# clockd: /' "$T/log"
stop_daemon TERM
finish
