#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# libclockd-preload.so puts unmodified programs on clockd time. The daemon
# runs on the simulated device 10 % slow, and an LD_PRELOAD trap on the
# daemon alone (tests/daemon/trap-preload.c) shows it a system time 1000 s
# ahead: its CLOCKD_REALTIME is then 1000 s ahead of the kernel's and its
# CLOCKD_MONOTONIC falls behind the kernel's by 100 ms a second, so
# whichever clock a program read is plain from what it prints. Each
# program's reading must lie between two reads of the clockd clock taken
# before and after it (by tests/preload/ptest through libclockd). Then,
# with the daemon stopped, the three CLOCKD_PRELOAD behaviours.
. "$top_srcdir/tests/daemon/common.sh"

PTEST=$top_builddir/tests/preload/ptest
CLOCKCTL=$top_builddir/src/clockctl/clockctl
LIB=$top_builddir/src/libclockd/.libs/libclockd-preload.so
TRAP=$top_builddir/tests/daemon/.libs/trap-preload.so
PPM=-100000
[ -f "$LIB" ] || { echo "Bail out! $LIB not built"; exit 99; }
[ -f "$TRAP" ] || { echo "Bail out! $TRAP not built"; exit 99; }

# A sanitizer build's library needs its runtimes loaded first, and the
# programs here are not built with them (no leak reports of theirs).
san=$(ldd "$LIB" | awk '/lib(asan|ubsan)\.so/ { printf "%s:", $3 }')
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0:detect_leaks=0"
PRE="$san$LIB"
pre() { LD_PRELOAD="$PRE" "$@"; }

# to_ns S.F: seconds with up to 9 decimals as integer ns
to_ns() {
	frac=$(printf '%-9.9s' "${1#*.}" | tr ' ' 0)
	echo "${1%.*}$frac" | sed 's/^-*0*\([0-9]\)/\1/'
}
# now: clockd and kernel realtime and monotonic into c_real c_mono k_real k_mono (ns)
now() {
	set -- $("$PTEST" now) || return 1
	c_real=$(to_ns "$1"); c_mono=$(to_ns "$2"); k_real=$(to_ns "$3"); k_mono=$(to_ns "$4")
}
# within VALUE LOW HIGH (ns)
within() { [ "$1" -ge "$2" ] && [ "$1" -le "$3" ]; }

echo 1000000000000 >"$T/offset"
export CLOCKD_TEST_REALTIME_OFFSET="$T/offset"
export LD_PRELOAD="$TRAP"
start_daemon "$T/clockd.log" -o source=sim -o "sim_rate_ppm=$PPM" -o hz=1000
st=$?
unset LD_PRELOAD CLOCKD_TEST_REALTIME_OFFSET
ok $st "the daemon runs on the sim device, $PPM ppm, realtime 1000 s ahead"
[ $st -eq 0 ] || finish

# Let CLOCKD_MONOTONIC fall 300 ms behind the kernel's (3 s at 10 %; 20 s
# at most), so that a monotonic reading's source is plain too.
i=0
while now && [ $((k_mono - c_mono)) -lt 300000000 ] && [ $i -lt 200 ]; do
	sleep 0.1
	i=$((i + 1))
done
echo "# clockd - kernel: realtime $(((c_real - k_real) / 1000000)) ms, monotonic $(((c_mono - k_mono) / 1000000)) ms"

# --- date ---
now; c0=$c_real; k0=$k_real
out=$(pre date +%s.%N)
now; c1=$c_real; k1=$k_real
v=$(to_ns "$out")
within "$v" "$c0" "$c1"
ok $? "date +%s.%N reads CLOCKD_REALTIME ($out; kernel $k0..$k1 ns)"

# --- python3: time.time() and time.monotonic() (floats: 1 us of rounding) ---
if [ -x /usr/bin/python3 ]; then
	now; c0=$c_real; m0=$c_mono
	out=$(pre /usr/bin/python3 -c 'import time; print(time.time(), time.monotonic())')
	now; c1=$c_real; m1=$c_mono
	set -- $out
	within "$(to_ns "$1")" $((c0 - 1000)) $((c1 + 1000))
	ok $? "python3 time.time() reads CLOCKD_REALTIME ($1)"
	within "$(to_ns "$2")" $((m0 - 1000)) $((m1 + 1000))
	ok $? "python3 time.monotonic() reads CLOCKD_MONOTONIC ($2; clockd $m0..$m1 ns)"
else
	ok 0 "# SKIP /usr/bin/python3 is not installed"
	ok 0 "# SKIP /usr/bin/python3 is not installed"
fi

# --- sleep: N s of the slow clockd clock are N / 0.9 s of the kernel's
# (less 10 ms / 0.9 for a start read that was behind; see ptest.c). The
# difference, 22 ms for sleep 0.2, is of the order of a loaded machine's
# fork and exec; for sleep 1 it is 111 ms, beyond them. The same plain,
# for comparison only. ---
for n in 0.2 1; do
	set -- $("$PTEST" timed env LD_PRELOAD="$PRE" sleep $n)
	want=$(awk -v n=$n 'BEGIN { printf "%d", n * 1e9 }')
	floor=$(awk -v w="$want" -v p=$PPM 'BEGIN { printf "%d", (w - 10000000) / (1 + p / 1e6) }')
	[ "$3" = 0 ] && [ "$1" -ge "$want" ] && [ "$2" -ge "$floor" ]
	ok $? "sleep $n sleeps $n s of clockd time: clockd $(($1 / 1000)) us, kernel $(($2 / 1000)) us (>= $((floor / 1000)))"
	set -- $("$PTEST" timed sleep $n)
	echo "# plain sleep $n for comparison: clockd $(($1 / 1000)) us, kernel $(($2 / 1000)) us"
done

# --- timer_create with SIGEV_SIGNAL and SIGEV_THREAD ---
for kind in signal thread; do
	out=$(pre "$PTEST" timer $kind $PPM)
	ok $? "timer_create(CLOCK_MONOTONIC, SIGEV_$(echo $kind | tr a-z A-Z)) expires on clockd time: $out"
done

# --- a kernel timer (SIGEV_THREAD_ID) armed at an absolute time of the
# program's realtime, 1000 s ahead of the kernel's ---
out=$(pre "$PTEST" tidtimer $PPM)
ok $? "timer_create(CLOCK_REALTIME, SIGEV_THREAD_ID) + TIMER_ABSTIME expires at the program's time: $out"

# --- clockctl run ---
now; c0=$c_real
out=$(LD_PRELOAD="${san%:}" "$CLOCKCTL" run --page "$CLOCKD_SHM" -- date +%s.%N)
now; c1=$c_real
within "$(to_ns "$out")" "$c0" "$c1"
ok $? "clockctl run -- date +%s.%N reads CLOCKD_REALTIME ($out)"
out=$(LD_PRELOAD="${san%:}" CLOCKD_PRELOAD_LIB="$TRAP" "$CLOCKCTL" run -- /bin/sh -c 'echo "$LD_PRELOAD"')
[ "$out" = "${san}$TRAP" ]
ok $? "clockctl run takes \$CLOCKD_PRELOAD_LIB ($out)"
out=$(LD_PRELOAD="${san}$TRAP" "$CLOCKCTL" run -- /bin/sh -c 'echo "$LD_PRELOAD"')
[ "$out" = "${san}$TRAP:$LIB" ]
ok $? "clockctl run appends the library to LD_PRELOAD, found beside libclockd ($out)"

# --- the daemon stops under a running program: one line, then the kernel's
# clocks (python3 reads, waits for a file, reads again) ---
if [ -x /usr/bin/python3 ]; then
	now; c0=$c_real
	pre /usr/bin/python3 -c '
import os, sys, time
print(time.time_ns(), flush=True)
while not os.path.exists(sys.argv[1]):
    time.sleep(0.01)
print(time.time_ns(), flush=True)' "$T/go" >"$T/py.out" 2>"$T/py.err" &
	py=$!
	i=0
	until [ -s "$T/py.out" ] || [ $i -ge 100 ]; do sleep 0.1; i=$((i + 1)); done
	now; c1=$c_real
	stop_daemon TERM
	k0=$(to_ns "$(date +%s.%N)")
	touch "$T/go"
	wait $py
	rc=$?
	k1=$(to_ns "$(date +%s.%N)")
	set -- $(cat "$T/py.out")
	sed 's/^/# stderr: /' "$T/py.err"
	[ $rc -eq 0 ] && [ $# -eq 2 ] && within "$1" "$c0" "$c1" && within "$2" "$k0" "$k1" &&
		[ "$(wc -l <"$T/py.err")" -eq 1 ] && grep -q "clockd went away" "$T/py.err"
	ok $? "the daemon stops under a running program: one warning, clockd's time then the kernel's ($*)"
else
	stop_daemon TERM
	ok 0 "# SKIP /usr/bin/python3 is not installed"
fi

# --- the daemon stopped: the page says it is gone ---
# run_mode MODE: date under the library with CLOCKD_PRELOAD=MODE; sets rc,
# out (stdout), lines (stderr lines), k0 k1 (kernel realtime around it)
run_mode() {
	now 2>/dev/null; k0=$(to_ns "$(date +%s.%N)")
	out=$(CLOCKD_PRELOAD=$1 pre date +%s.%N 2>"$T/err")
	rc=$?
	k1=$(to_ns "$(date +%s.%N)")
	lines=$(wc -l <"$T/err")
	sed 's/^/# stderr: /' "$T/err"
}
run_mode warn
[ $rc -eq 0 ] && [ "$lines" -eq 1 ] && grep -q "no live clockd at $CLOCKD_SHM" "$T/err" &&
	within "$(to_ns "$out")" "$k0" "$k1"
ok $? "daemon stopped, CLOCKD_PRELOAD=warn: one warning, the kernel's time ($out)"
run_mode silent
[ $rc -eq 0 ] && [ "$lines" -eq 0 ] && within "$(to_ns "$out")" "$k0" "$k1"
ok $? "CLOCKD_PRELOAD=silent: no warning, the kernel's time"
run_mode refuse
[ $rc -eq 1 ] && [ "$lines" -eq 1 ] && [ -z "$out" ] && grep -q refus "$T/err"
ok $? "CLOCKD_PRELOAD=refuse: exit 1 with the reason, before the program runs"
CLOCKD_PRELOAD=silent pre sleep 0.2
ok $? "without a daemon sleep 0.2 still works (on the kernel's clock)"
CLOCKD_SHM=$T/no-such-dir/page run_mode warn
[ $rc -eq 0 ] && [ "$lines" -eq 1 ] && grep -q "No such file" "$T/err"
ok $? "no page at all: one warning naming why"
finish
