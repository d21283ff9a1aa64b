#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# clockd's sd_notify messages as systemd would receive them, with a
# listener on $NOTIFY_SOCKET (notify-listen) and no PID 1:
#  - READY=1 comes once the page is live and the control socket answers
#    (the listener checks both on receiving it), after STATUS= lines naming
#    the state, the source, the tick device and HZ;
#  - with WATCHDOG_USEC=1 s, WATCHDOG=1 comes about every 0.5 s while the
#    tick advances (several, and not a flood: 8 s of it), none from the moment the
#    sim tick stalls (STATUS=tick stalled) until it ticks again
#    (STATUS=live), and again after;
#  - with the stall of both sim devices (-o source=sim -o tick=sim), none
#    at all after the stall: the daemon that stays stalled trips the
#    watchdog;
#  - SIGHUP: RELOADING=1 with MONOTONIC_USEC=, then READY=1;
#  - SIGTERM: STOPPING=1, exit 0.
. "$top_srcdir/tests/service/lib.sh"

# start NAME CLOCKD-ARGS...: a listener on $tmp/NAME.sock (messages in
# $tmp/NAME.msgs), then clockd notifying it (log in $tmp/NAME.log); its
# pid in $dpid.
start() {
	name=$1
	shift
	"$LISTEN" "$tmp/$name.sock" 60 "$tmp/control" >"$tmp/$name.msgs" &
	pids="$pids $!"
	poll "$DEADLINE_S" has "$tmp/$name.msgs" ' listening$' || bail "notify-listen did not start"
	NOTIFY_SOCKET=$tmp/$name.sock WATCHDOG_USEC=1000000 "$CLOCKD" -o page="$tmp/page" "$@" \
		2>"$tmp/$name.log" &
	dpid=$!
	pids="$pids $dpid"
}

# count FILE FROM TO WHAT: messages equal to WHAT after the first message
# matching FROM (a regex) and before the next one matching TO after it
# ("": to the end). A message is a line without its leading time.
count() {
	awk -v from="$2" -v to="$3" -v what="$4" '
		{ msg = substr($0, index($0, " ") + 1) }
		state == 0 && msg ~ from { state = 1; next }
		state == 1 && to != "" && msg ~ to { exit }
		state == 1 && msg == what { n++ }
		END { print n + 0 }' "$1"
}
# ms FILE REGEX [NTH]: the time of the NTH (default first) message matching REGEX
ms() {
	awk -v re="$2" -v nth="${3:-1}" 'substr($0, index($0, " ") + 1) ~ re && ++n == nth { print $1; exit }' "$1"
}

stop() { # stop: SIGTERM the daemon, wait for it; its exit status in $drc
	kill -TERM "$dpid"
	wait "$dpid"
	drc=$?
}

# --- 1: a tick that stalls for 3 s and recovers (source posix) --------------
# The stall comes 8 s after the start: READY=1 must come before it, and
# beside make check's floods (budget.sh's SCHED_FIFO timer threads on
# both CPUs) a start took 3.4 s and 6 s in CI; 3 s was too short.
start a -o source=posix -o tick=sim -o "sim_script=8s stall 3s"
m=$tmp/a.msgs
poll "$DEADLINE_S" has "$m" ' READY=1$' || { diag_file "$tmp/a.log"; bail "no READY=1 within ${DEADLINE_S} s"; }
has "$m" ' CHECK page live socket ok$'
ok $? "at READY=1 the page is live and the control socket answers"
[ "$(count "$m" '^listening$' '' READY=1)" -eq 1 ]
ok $? "READY=1 comes once at start"
awk '$2 == "READY=1" { exit } $2 ~ /^STATUS=/ { s = $0 } END { exit !(s ~ /STATUS=live: source posix, tick sim, HZ 1000$/) }' "$m"
ok $? "the STATUS= before READY=1 names the state, source, tick device and HZ"

poll "$DEADLINE_S" has "$m" ' STATUS=tick stalled:' || diag_file "$tmp/a.log"
DEADLINE_S=15 poll "$DEADLINE_S" sh -c "awk '/STATUS=tick stalled/ { s = 1 } s && /WATCHDOG=1/ { f = 1 } END { exit !f }' '$m'"
n_before=$(count "$m" '^READY=1$' '^STATUS=tick stalled' WATCHDOG=1)
span=$(($(ms "$m" '^STATUS=tick stalled') - $(ms "$m" '^READY=1$')))
# At 0.5 s intervals a 3 s span holds about 6; a ping per check (every
# 0.1 s) would be 30: the bound says "paced", with room for any delay.
[ "$n_before" -ge 2 ] && [ "$n_before" -le $((span / 400 + 2)) ]
ok $? "WATCHDOG=1 every ~0.5 s while ticking ($n_before in $span ms before the stall)"
[ "$(count "$m" '^STATUS=tick stalled' '^STATUS=live' WATCHDOG=1)" -eq 0 ] &&
	has "$m" ' STATUS=tick stalled: source posix, tick sim, HZ 1000$'
ok $? "no WATCHDOG=1 between STATUS=tick stalled and STATUS=live"
awk '/STATUS=tick stalled/ { s = 1 } s && /STATUS=live/ { l = 1 } l && /WATCHDOG=1/ { w = 1 } END { exit !w }' "$m"
ok $? "WATCHDOG=1 resumes once the tick is live again"

kill -HUP "$dpid"
poll "$DEADLINE_S" sh -c "awk '/RELOADING=1/ { r = 1 } r && /READY=1/ { f = 1 } END { exit !f }' '$m'"
awk '/ RELOADING=1$/ { r = NR } r && / MONOTONIC_USEC=[0-9]+$/ && !u { u = NR } u && / READY=1$/ && !d { d = NR }
	END { exit !(r && u > r && d > u) }' "$m"
ok $? "SIGHUP: RELOADING=1 with MONOTONIC_USEC=, then READY=1"
stop
[ $drc -eq 0 ] && has "$m" ' STOPPING=1$'
ok $? "SIGTERM: STOPPING=1 and exit 0 (exit $drc)"
[ $tap_failed -eq 0 ] || { diag_file "$m"; diag_file "$tmp/a.log"; }

# --- 2: both sim devices stall (-o source=sim -o tick=sim) -----------------
rm -f "$tmp/page"
start b -o source=sim -o tick=sim -o "sim_script=2s stall 5s"
m=$tmp/b.msgs
poll "$DEADLINE_S" has "$m" ' READY=1$' || { diag_file "$tmp/b.log"; bail "no READY=1 within ${DEADLINE_S} s"; }
poll "$DEADLINE_S" has "$m" ' STATUS=tick stalled:'
ok $? "the stalled sim tick is reported (STATUS=tick stalled)"
# Watch the stall for 2 s: the observation window, not a readiness wait.
sleep 2
stop
before=$(count "$m" '^READY=1$' '^STATUS=tick stalled' WATCHDOG=1)
after=$(count "$m" '^STATUS=tick stalled' '' WATCHDOG=1)
[ "$before" -ge 1 ] && [ "$after" -eq 0 ]
ok $? "sim stall: WATCHDOG=1 before it ($before), none after ($after)"
[ $drc -eq 0 ]
ok $? "a stalled daemon still stops cleanly on SIGTERM (exit $drc)"
[ $tap_failed -eq 0 ] || { diag_file "$m"; diag_file "$tmp/b.log"; }

finish
