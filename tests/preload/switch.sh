#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Issue 15: a program under libclockd-preload.so that loses its daemon
# reads the kernel's clocks meanwhile and comes back to clockd's, and no
# clock it reads goes back across a switch. tests/preload/follow reads
# CLOCK_MONOTONIC in two threads and _COARSE in a third (every read pair
# checked, within and across threads), sleeps in a fourth (no sleep may
# end early), and after each event says whether the process reads clockd
# time again (its clock between two reads of clockd's through libclockd).
#
#   1. clockd on the simulated device 5 % fast, so that its clock runs
#      ahead of the kernel's (a switch to the kernel's clock as it is would
#      go back; not faster: the daemon calls a counter more than 1/16 off
#      the kernel's across a stop a stepped one, and fails reads for 10 s): a 300 ms SIGSTOP, then kill -9 and a restart on the same
#      page; the kill must move the process to the kernel, the restart
#      back to clockd.
#   2. clockd on the posix source, whose counter clients read, with an
#      extrapolation bound of 1 s: a 1.5 s SIGSTOP outlasts it, so reads
#      fail and the process goes to the kernel and back (a 300 ms stop,
#      as in 1, is extrapolated: no switch).
#      A page of its own: on a continued page clockd's clocks are apart
#      from the kernel's, and the follower's own libclockd, whose counter
#      read (the kernel's CLOCK_MONOTONIC_RAW) the library interposes,
#      would then read clockd's CLOCKD_MONOTONIC_RAW as its counter. Away,
#      the process's clock is ahead of clockd's by the margin of the
#      switch (0.1 % of the time since the last update, and 1 us),
#      which the follower's check sees.
. "$top_srcdir/tests/daemon/common.sh"

FOLLOW=$top_builddir/tests/preload/follow
LIB=$top_builddir/src/libclockd/.libs/libclockd-preload.so
[ -f "$LIB" ] || { echo "Bail out! $LIB not built"; exit 99; }
san=$(ldd "$LIB" | awk '/lib(asan|ubsan)\.so/ { printf "%s:", $3 }')
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0:detect_leaks=0"

fpid=
cleanup_follow() {
	[ -n "$fpid" ] && kill -9 "$fpid" 2>/dev/null
	cleanup
}
trap cleanup_follow EXIT

# follow_start PHASE: tests/preload/follow under the library, in $T/PHASE
follow_start() {
	D=$T/$1
	mkdir -p "$D"
	LD_PRELOAD="$san$LIB" "$FOLLOW" follow "$D" >"$D/out" 2>"$D/err" &
	fpid=$!
	i=0
	until [ -f "$D/ready" ] || [ $i -ge 100 ]; do sleep 0.1; i=$((i + 1)); done
	[ -f "$D/ready" ]
}

# follow_check N: ask for check N; its answer in $res, 0 if "ok"
follow_check() {
	: >"$D/check.$1"
	i=0
	until [ -f "$D/result.$1" ] || [ $i -ge 300 ]; do sleep 0.1; i=$((i + 1)); done
	res=$(cat "$D/result.$1" 2>/dev/null)
	case $res in ok*) return 0 ;; esac
	return 1
}

# follow_stop: the counts in $res, 0 if no read went back and no sleep was short
follow_stop() {
	: >"$D/stop"
	wait "$fpid"
	st=$?
	fpid=
	res=$(cat "$D/out")
	sed 's/^/# stderr: /' "$D/err"
	return $st
}

# pause_daemon MS: SIGSTOP the daemon for MS ms
pause_daemon() {
	kill -STOP "$daemon_pid"
	sleep "$(awk -v ms="$1" 'BEGIN { printf "%.3f", ms / 1000 }')"
	kill -CONT "$daemon_pid"
}

lines() { grep -c "$1" "$D/err"; }

# --- 1: the simulated device, 5 % fast: SIGSTOP, then kill -9 + restart ---
start_daemon "$T/clockd1.log" -o source=sim -o sim_rate_ppm=50000 -o hz=1000
ok $? "clockd starts on the sim device, 5 % fast"
[ -n "$daemon_pid" ] || finish
follow_start sim
ok $? "the follower starts under the library"
sleep 1 # clockd's clock 50 ms ahead of the kernel's
pause_daemon 300
follow_check 1
ok $? "after a 300 ms SIGSTOP the process reads clockd time: $res"
stop_daemon KILL
sleep 0.5
start_daemon "$T/clockd2.log" -o source=sim -o sim_rate_ppm=50000 -o hz=1000
ok $? "clockd restarts on the same page"
follow_check 2
ok $? "after kill -9 and a restart the process reads clockd time: $res"
follow_stop
ok $? "no read went back, no sleep was short: $res"
away=$(lines "went away")
back=$(lines "clockd is back")
echo "# switches: $away away, $back back"
[ "$away" -ge 1 ] && [ "$away" -eq "$back" ] && tail -n 1 "$D/err" | grep -q "clockd is back"
ok $? "the kill moved the process to the kernel, the restart back to clockd ($away, $back)"
stop_daemon TERM

# --- 2: the posix source on a page of its own, SIGSTOP ---
export CLOCKD_SHM=$T/page2
start_daemon "$T/clockd3.log" -o source=posix -o extrapolate_max_s=1
ok $? "clockd starts on the posix source"
[ -n "$daemon_pid" ] || finish
follow_start posix
ok $? "the follower starts under the library"
sleep 0.3
pause_daemon 1500
follow_check 1
ok $? "after a 1.5 s SIGSTOP (past the 1 s bound) the process reads clockd time: $res"
follow_stop
ok $? "no read went back, no sleep was short: $res"
away=$(lines "went away")
back=$(lines "clockd is back")
echo "# switches: $away away, $back back"
[ "$away" -ge 1 ] && [ "$away" -eq "$back" ]
ok $? "past the bound it went to the kernel, and as often back to clockd ($away)"

finish
