#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# POSIX to the letter under the preload (issue 26, items 1-6): an
# unmodified program (tests/preload/posixprog, no libclockd) run under
# `clockctl run` with CLOCKD_PRELOAD=refuse gets what the kernel gives it:
# timer calls safe from a signal handler, the time left after an
# interrupted sleep, intervals under 1 us rounded up with overruns in the
# timer's own periods capped at INT_MAX, one queued SI_TIMER signal per
# timer with the rest as overruns (si_timerid the timer's id), no EINTR
# from timer_settime, and max_timers_per_user met at timer_create. Then
# libclockd's own read from a signal handler with the daemon dead.
. "$top_srcdir/tests/daemon/common.sh"

PROG=$top_builddir/tests/preload/posixprog
DEAD=$top_builddir/tests/preload/deadread
CLOCKCTL=$top_builddir/src/clockctl/clockctl
LIB=$top_builddir/src/libclockd/.libs/libclockd-preload.so
[ -f "$LIB" ] || { echo "Bail out! $LIB not built"; exit 99; }
san=$(ldd "$LIB" | awk '/lib(asan|ubsan)\.so/ { printf "%s:", $3 }')
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0:detect_leaks=0"

# run CMD: posixprog CMD on clockd (refusing to run without it), at most
# 60 s: a deadlock is a timeout (status 124).
run() {
	CLOCKD_PRELOAD=refuse LD_PRELOAD="${san%:}" timeout 60 \
		"$CLOCKCTL" run --page "$CLOCKD_SHM" -- "$PROG" "$@"
}
# field NAME LINE: the word after NAME in LINE
field() { echo "$2" | awk -v k="$1" '{ for (i = 1; i < NF; i++) if ($i == k) { print $(i + 1); exit } }'; }
# ns S.F: seconds as integer ns
ns() { echo "$1" | awk '{ printf "%.0f\n", $1 * 1e9 }'; }

start_daemon "$T/clockd.log"
st=$?
ok $st "the daemon runs"
[ $st -eq 0 ] || finish

# 1. A handler re-arming the timer while main loops on timer_gettime.
for i in 1 2 3; do
	out=$(run sigsafe)
	st=$?
	f=$(field fires "$out")
	[ $st -eq 0 ] && [ "${f:-0}" -gt 10 ]
	ok $? "run $i: timer_settime from a SIGALRM handler while main loops on timer_gettime: no deadlock (status $st: $out)"
done

# 2. A 5 s sleep interrupted after 1 s leaves about 4 s (a loaded machine
# may deliver the signal late: at least 2 s left, never the whole 5 s).
out=$(run rem)
st=$?
# shellcheck disable=SC2046 # two words
set -- $(echo "$out" | awk '{ for (i = 1; i < NF; i++) if ($i == "rem") printf "%s ", $(i + 1) }')
r1=$(ns "${1:-0}") r2=$(ns "${2:-0}")
[ $st -eq 0 ] && [ "$r1" -ge 2000000000 ] && [ "$r1" -le 4100000000 ]
ok $? "nanosleep interrupted: rem is the time left, about 4 s ($out)"
[ $st -eq 0 ] && [ "$r2" -ge 2000000000 ] && [ "$r2" -le 4100000000 ]
ok $? "relative clock_nanosleep interrupted: rem is the time left, about 4 s"

# 3. Short intervals.
out=$(run short)
st=$?
[ $st -eq 0 ] && echo "$out" | grep -q '^interval-1ns ok'
ok $? "an interval of 1 ns is accepted, rounded up ($out)"
what="a 1 ns timer due 2500 s ago overruns INT_MAX times (its own periods, capped)"
[ "$(field overrun-2500s "$out")" = 2147483647 ]
ok $? "$what, told 20 ms after its signal was taken, the next one pending"

# 4. One signal queued per timer, the rest overruns.
out=$(run queue)
st=$?
e=$(field expiries "$out")
g=$(field getoverrun "$out")
[ $st -eq 0 ] && [ "$(field signals "$out")" = 1 ]
ok $? "SIGRTMIN blocked 1 s, a 10 ms timer: one signal queued ($out)"
[ "$(field si_code "$out")" = SI_TIMER ]
ok $? "its si_code is SI_TIMER"
[ "$(field si_timerid "$out")" = timer_t ]
ok $? "its si_timerid is the timer's id, as timer_create gave it"
# (Counted as the delivery thread takes them: on a loaded machine it may
# trail the expiries by the time; libclockd-preload(8). An unloaded run
# gives 99 of 100, as the kernel; the code before counted 0.)
[ "${g:--1}" -ge $((${e:-0} / 2)) ] && [ "${g:--1}" -le "${e:-0}" ]
ok $? "timer_getoverrun counts the expiries folded while it was pending ($g of $e)"

# 5. No EINTR from the first timer_settime (it connects to the daemon).
bad=0
for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
	out=$(run eintr)
	[ "$out" = "timer_settime ok" ] || { bad=$((bad + 1)); echo "# run $i: $out"; }
done
[ $bad -eq 0 ]
ok $? "the first timer_settime with SIGALRM every 20 us: no error in 20 runs ($bad failed)"

# 6. max_timers_per_user is met at timer_create (POSIX's EAGAIN), never
# by a timer_settime that returned 0 for a timer the daemon then refused.
stop_daemon TERM
start_daemon "$T/quota.log" -o max_timers_per_user=20
st=$?
out=$(run quota 30)
[ $st -eq 0 ] && [ "$out" = "armed 20 failed timer_create EAGAIN pending 20" ]
ok $? "max_timers_per_user 20: 20 timers armed and pending, the 21st timer_create fails with EAGAIN ($out)"

# libclockd: the daemon dead, a handler reading CLOCKD_MONOTONIC every
# 50 us while main reads it too.
stop_daemon KILL
for i in 1 2 3; do
	out=$(LD_PRELOAD="${san%:}" timeout 60 "$DEAD")
	st=$?
	h=$(field handler "$out")
	[ $st -eq 0 ] && [ "${h:-0}" -gt 0 ]
	ok $? "run $i: the daemon dead, CLOCKD_MONOTONIC read in a SIGALRM handler and in main: no deadlock (status $st: $out)"
done

finish
