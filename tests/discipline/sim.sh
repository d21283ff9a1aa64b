#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The discipline against the simulated 1 PPS: 20 ppm fast, +-10 us of
# jitter, 300 ms late at the start, two missing and two spurious pulses,
# then silence. One daemon run of about 95 s: the start step, the lock
# (state and SYNCED flag), the frequency estimate against the simulated
# rate, the clock's true error (against the simulation's truth), pulses
# dropped and missing, holdover when the pulses stop, and monotonic time
# never going back.
. "$top_srcdir/tests/discipline/common.sh"
TRUTH=$top_builddir/tests/discipline/truth

synced() { "$CLOCKCTL" status | grep -Eq '^ *flags: .*synced'; }

start=$(date +%s)
if ! start_daemon "$T/clockd.log" -o hz=100 -o source=posix -o posix_clock=monotonic \
	-o reference=sim -o sim_rate_ppm=20 -o sim_jitter_ns=10000 \
	-o "sim_script=0s step -300ms; 60s miss 2; 65s spurious 2; 80s stall"; then
	ok 1 "the daemon starts"
	finish
fi
"$MONITOR" 90 >"$T/monitor" 2>&1 &
mon=$!
st=$(field state)
echo "# state at the start: $st"
{ [ "$st" = unlocked ] || [ "$st" = acquiring ]; } && ! synced
ok $? "unsynchronised at the start"

wait_state locked 60
ok $? "locked within 60 pulses"
lock_s=$(($(date +%s) - start))
echo "# locked about $lock_s s after the start"
synced
ok $? "the page's SYNCED flag is set"
grep -q 'reference sim: CLOCKD_REALTIME stepped by -300' "$T/clockd.log"
ok $? "the 300 ms offset at the start was stepped (realtime back by 300 ms)"
truth=$(sed -n 's/.*tick sim: pulse 0 at kernel CLOCK_MONOTONIC \([0-9]*\) ns, period \([0-9.]*\) ns.*/\1 \2/p' \
	"$T/clockd.log")
echo "# truth: $truth"

# Settle, then measure for 30 s.
sleep $((25 - lock_s > 0 ? 25 - lock_s : 0))
# shellcheck disable=SC2086 # two words
"$TRUTH" $truth 30 >"$T/truth"
grep '^#' "$T/truth"
set -- $(grep -v '^#' "$T/truth")
echo "# true error of CLOCKD_REALTIME over 30 s: RMS $1 ns, max $2 ns"
# The statistical floor with this jitter (5.8 us RMS) and a fit over 25 to
# 55 pulses is about 2 sigma / sqrt(N), 1.6 to 2.3 us.
[ -n "$1" ] && [ "$1" -le 4000 ]
ok $? "the true error RMS is at most 4 us"
[ "${3:-1}" -eq 0 ]
ok $? "CLOCKD_MONOTONIC never went back"
rms=$(field rms_offset_ns)
echo "# clockctl tracking: RMS offset $rms ns"
[ -n "$rms" ] && [ "$rms" -le 3000 ]
ok $? "the estimated RMS offset is at most 3 us"

# Missing (60 s) and spurious (65 s) pulses: dropped, still locked.
sleep $((70 - ($(date +%s) - start)))
grep -q 'reference sim: a pulse .* spurious: dropped' "$T/clockd.log"
ok $? "spurious pulses are dropped, and logged"
[ "$(field state)" = locked ]
ok $? "still locked after missing and spurious pulses"

# The rate, from a full window of 64 pulses (its standard error with this
# jitter is about 30 ppb).
sleep $((78 - ($(date +%s) - start)))
freq=$(awk -v f="$(field freq_ppb)" 'BEGIN { if (f != "") printf "%.3f", f / 1000 }')
skew=$(awk -v f="$(field skew_ppb)" 'BEGIN { if (f != "") printf "%.3f", f / 1000 }')
echo "# clockctl tracking at 78 s: frequency $freq ppm, skew $skew ppm"
awk -v f="$freq" 'BEGIN { exit !(f != "" && f - 20 < 0.1 && 20 - f < 0.1) }'
ok $? "the frequency estimate is within 0.1 ppm of the simulated +20 ppm"

# Silence from 80 s: holdover, SYNCED cleared, the reference stalled.
wait_state holdover 30
ok $? "holdover when the pulses stop"
! synced
ok $? "the SYNCED flag is cleared"
i=0
until "$CLOCKCTL" sources | grep -Eq '^ref +sim +fault +stalled' || [ $i -ge 100 ]; do
	sleep 0.1; i=$((i + 1))
done
"$CLOCKCTL" sources | grep -Eq '^ref +sim +fault +stalled'
ok $? "clockctl sources shows the reference stalled"
grep -q 'reference sim: locked -> holdover' "$T/clockd.log"
ok $? "the log says locked -> holdover"

wait $mon
st=$?
sed 's/^/# /' "$T/monitor"
ok $st "no clock went back in 90 s"
grep 'reference sim' "$T/clockd.log" | sed 's/^/# /'
stop_daemon TERM
finish
