#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# reference = pps: a kernel PPS device through the RFC 2783 ioctls, here a
# fake one (fakepps-preload.c: edges on the whole seconds of the kernel's
# realtime, shifted by CLOCKD_TEST_PPS_OFFSET_NS), so the daemon's path
# through the driver, the discipline and the page is the real one. The
# clock locks to it, its realtime follows the edges (a PPS 3 ms late makes
# clockd's realtime 3 ms behind the kernel's), a pulled cable is a stalled
# reference in holdover, and a device that is no PPS is refused at start.
# The real kernel source (pps-hrtimer in the guest, beside chrony's refclock
# PPS) is for make check-hw.
. "$top_srcdir/tests/discipline/common.sh"
PRELOAD=$top_builddir/tests/discipline/.libs/fakepps-preload.so
[ -e "$PRELOAD" ] || { echo "1..0 # SKIP $PRELOAD not built"; exit 0; }
# A sanitizer build's preload in the programs start_daemon runs beside it.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
export CLOCKD_TEST_PPS="$T/pps0" CLOCKD_TEST_PPS_OFFSET_NS=3000000

LD_PRELOAD=$PRELOAD start_daemon "$T/clockd.log" -o hz=100 -o source=posix -o posix_clock=monotonic \
	-o reference=pps -o pps_device="$T/pps0"
ok $? "clockd starts with reference pps on $T/pps0"
grep 'reference pps' "$T/clockd.log" | sed 's/^/# /'
grep -q "reference pps $T/pps0 assert" "$T/clockd.log"
ok $? "the log names the device and the assert (rising) edge"
wait_state locked 60
ok $? "the tracking locks to the kernel PPS (state $(field state))"
# clockctl time: realtime's difference to the kernel's, with the PPS 3 ms
# late: clockd's realtime comes to be that much behind (the phase is
# slewed, half a second's worth at a time; within 200 us: a loaded
# machine's time stamps are the fake's wake-ups).
realtime_diff() { "$CLOCKCTL" --json time 2>/dev/null | jq '.realtime.diff_ns'; }
behind_3ms() { d=$(realtime_diff); [ -n "$d" ] && [ "$d" -gt -3200000 ] && [ "$d" -lt -2800000 ]; }
i=0
until behind_3ms || [ $i -ge 600 ]; do sleep 0.1; i=$((i + 1)); done
behind_3ms
ok $? "clockd's realtime follows the PPS edges: $(realtime_diff) ns from the kernel's (want -3 ms)"
"$CLOCKCTL" sources | grep -E '^ *ref +pps ' | sed 's/^/# /'
"$CLOCKCTL" sources | grep -Eq '^ *ref +pps +active'
ok $? "clockctl sources: ref pps active"

: >"$T/pps0.stop"
wait_state holdover 30
ok $? "no pulse (the cable pulled): holdover (state $(field state))"
rm -f "$T/pps0.stop"
wait_state locked 60
ok $? "pulses again: locked again (state $(field state))"
stop_daemon TERM

: >"$T/notpps"
"$CLOCKD" --check-config -o reference=pps -o pps_device=relative >/dev/null 2>"$T/err"
[ $? -ne 0 ] && grep -q "pps_device: 'relative' is not an absolute path" "$T/err"
ok $? "pps_device must be an absolute path"
"$CLOCKD" -o page="$CLOCKD_SHM" -o reference=pps -o pps_device="$T/notpps" >"$T/err" 2>&1
[ $? -ne 0 ] && grep -q "reference pps $T/notpps: not a PPS device" "$T/err"
ok $? "a file that is no PPS device is refused at start, naming it"
sed 's/^/# /' "$T/err"
finish
