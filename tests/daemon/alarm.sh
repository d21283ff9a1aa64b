#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The page's alarm: when the tick thread hangs in its device (here a real
# timerfd read held by an LD_PRELOAD trap), status says STALE after the
# stale limit while every read still succeeds (the fine ones extrapolate);
# past the extrapolation bound (1 s here) the daemon's main thread raises
# the alarm and every read, coarse ones included, fails with ESTALE. When
# the device returns, the alarm is cleared and reads succeed again. Both
# transitions are logged once.
. "$top_srcdir/tests/daemon/common.sh"

preload=$top_builddir/tests/daemon/.libs/trap-preload.so
[ -f "$preload" ] || { echo "Bail out! $preload not built"; exit 99; }
# An ASan daemon wants its runtime first; the trap is preloaded before it.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
export CLOCKD_TEST_STALL="$T/stall"

all_stale() { "$PROBE" reads >/dev/null; [ $? -eq 3 ]; }
all_good() { "$PROBE" reads >/dev/null; }
state_is() { [ "$("$PROBE" state)" = "$1" ]; }

# (exported around the start: "VAR=x function" does not reach the
# function's children in every shell)
export LD_PRELOAD="$preload"
start_daemon "$T/log" -o hz=1000 -o stale_after_ms=100 -o extrapolate_max_s=1 || { unset LD_PRELOAD; ok 1 "start"; finish; }
unset LD_PRELOAD
"$PROBE" reads | sed 's/^/# /'
all_good
ok $? "before the stall every clock and jiffies_64 read"

t0=$(date +%s%N)
touch "$T/stall"
poll 5 state_is 2
ok $? "tick device hung: clockd_status says STALE (2) past the stale limit"
all_good
rc=$?
# (the daemon's last update was before the touch: 800 ms after it, the
# 1 s bound has not passed)
[ $(( $(date +%s%N) - t0 )) -lt 800000000 ] || rc=77
if [ $rc -eq 77 ]; then
	skip "within the 1 s bound every read still succeeds" "too slow a machine to read within the bound"
else
	ok $rc "within the 1 s bound every read still succeeds (fine ones extrapolated)"
fi
poll 10 all_stale
ok $? "tick device hung: every read (fine, coarse, jiffies) fails with ESTALE"
state_is 2
ok $? "clockd_status says STALE (2)"
poll 5 grep -q "alarm raised" "$T/log"
ok $? "the daemon logged the alarm"

rm -f "$T/stall"
poll 10 all_good
ok $? "tick device back: every read succeeds again"
poll 5 state_is 1
ok $? "clockd_status says LIVE (1)"
poll 5 grep -q "alarm cleared" "$T/log"
ok $? "the daemon logged the recovery"
[ "$(grep -c 'alarm raised' "$T/log")" -eq 1 ] && [ "$(grep -c 'alarm cleared' "$T/log")" -eq 1 ]
ok $? "each transition logged exactly once"
sed 's/^/# clockd: /' "$T/log"
stop_daemon TERM
finish
