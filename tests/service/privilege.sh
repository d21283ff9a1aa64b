#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Privilege drop, seen from outside: started as root with -o user=nobody,
# clockd runs as nobody (all four uids and gids in /proc/PID/status), with
# no capability left (effective, permitted, bounding), yet serves: the page
# (0644, its group the daemon's) is live and the control socket (0660, its
# group the daemon's) answers clockctl timers, when both priorities are 0
# (SCHED_OTHER). By default (tick_priority 40, timer_priority 30) it keeps
# exactly CAP_SYS_NICE and its tick and timer threads run SCHED_FIFO at
# those priorities; likewise with timer_priority alone; page_mode/
# page_group and socket_group set the files' access. With tick_priority
# > 0 alone the tick thread runs SCHED_FIFO; started without the
# capability, the daemon says so in one line and runs every thread
# SCHED_OTHER (not a start error). An unknown user is a start error.
. "$top_srcdir/tests/service/lib.sh"

[ "$(id -u)" -eq 0 ] || skip_all "needs root to switch user (running as uid $(id -u))"
id nobody >/dev/null 2>&1 || skip_all "there is no user nobody"
nobody_uid=$(id -u nobody)
nobody_gid=$(id -g nobody)
nobody_group=$(id -gn nobody)
# The daemon, once nobody, reads its own page by path (its timer bases are
# libclockd clients): the directory must let it through.
chmod 755 "$tmp"
# Bit 8 is CAP_SETPCAP: without it (some containers) the bounding set
# cannot be trimmed and clockd says so.
capbnd_droppable=$(( 0x$(awk '/^CapEff:/ { print $2 }' /proc/self/status) >> 8 & 1 ))

field() { # field PID NAME: the value of NAME: in /proc/PID/status, tabs as spaces
	awk -v n="$2:" '$1 == n { $1 = ""; sub(/^ /, ""); print; exit }' "/proc/$1/status"
}

# run NAME ARGS...: a daemon on $tmp/page (log $tmp/NAME.log), waited for;
# pid in $dpid.
run() {
	name=$1
	shift
	rm -f "$tmp/page" "$tmp/control"
	"$CLOCKD" -o page="$tmp/page" "$@" 2>"$tmp/$name.log" &
	dpid=$!
	pids="$pids $dpid"
	poll "$DEADLINE_S" page_live || { diag_file "$tmp/$name.log"; bail "clockd $* did not go live"; }
}
stop() { kill -TERM "$dpid"; wait "$dpid"; drc=$?; }

# --- user nobody, no capability (both priorities 0: SCHED_OTHER) ---------------
run a -o user=nobody -o tick_priority=0 -o timer_priority=0
[ "$(field "$dpid" Uid)" = "$nobody_uid $nobody_uid $nobody_uid $nobody_uid" ]
ok $? "runs as uid $nobody_uid (real, effective, saved, fs): $(field "$dpid" Uid)"
[ "$(field "$dpid" Gid)" = "$nobody_gid $nobody_gid $nobody_gid $nobody_gid" ]
ok $? "runs as gid $nobody_gid: $(field "$dpid" Gid)"
[ "$(field "$dpid" CapEff)" = 0000000000000000 ] && [ "$(field "$dpid" CapPrm)" = 0000000000000000 ] &&
	[ "$(field "$dpid" CapInh)" = 0000000000000000 ] && [ "$(field "$dpid" CapAmb)" = 0000000000000000 ]
ok $? "no capability: CapEff $(field "$dpid" CapEff), CapPrm $(field "$dpid" CapPrm)"
if [ "$capbnd_droppable" -eq 1 ]; then
	[ "$(field "$dpid" CapBnd)" = 0000000000000000 ]
	ok $? "empty bounding set: CapBnd $(field "$dpid" CapBnd)"
else
	skip "this test runs without CAP_SETPCAP: the bounding set cannot be trimmed"
fi
[ "$(stat -c '%a %u %g' "$tmp/page")" = "644 0 $nobody_gid" ]
ok $? "page mode 644, owned by root, group $nobody_group: $(stat -c '%a %U %G' "$tmp/page")"
[ "$(stat -c '%a %g' "$tmp/control")" = "660 $nobody_gid" ]
ok $? "control socket mode 660, group $nobody_group: $(stat -c '%a %U %G' "$tmp/control")"
# Polled: the page goes live before the timer bases start and the socket
# is served (CI once asked in between, beside a loaded make check).
poll "$DEADLINE_S" sh -c '"$1" timers --socket "$2" >"$3" 2>&1' sh "$CLOCKCTL" "$tmp/control" "$tmp/timers"
st=$?
ok $st "the control socket serves (clockctl timers)$([ $st -eq 0 ] || sed -n '1s/^/: /p' "$tmp/timers")"
has "$tmp/a.log" "privileges: running as uid $nobody_uid gid $nobody_gid, capabilities: none"
ok $? "the log says who the daemon became"
stop
[ $drc -eq 0 ]
ok $? "it stops cleanly as nobody (exit $drc)"
[ $tap_failed -eq 0 ] || diag_file "$tmp/a.log"

# --- timer_priority keeps CAP_SYS_NICE; page and socket groups --------------
run b -o user=nobody -o tick_priority=0 -o timer_priority=1 -o page_mode=0640 -o page_group="$nobody_group" \
	-o socket_group=root
# CAP_SYS_NICE is capability 23.
[ "$(field "$dpid" CapEff)" = 0000000000800000 ] && [ "$(field "$dpid" CapPrm)" = 0000000000800000 ]
ok $? "timer_priority 1: only CAP_SYS_NICE (CapEff $(field "$dpid" CapEff))"
[ "$(stat -c '%a %g' "$tmp/page")" = "640 $nobody_gid" ]
ok $? "page_mode 0640, page_group $nobody_group: $(stat -c '%a %U %G' "$tmp/page")"
[ "$(stat -c '%a %g' "$tmp/control")" = "660 0" ]
ok $? "socket_group root: $(stat -c '%a %U %G' "$tmp/control")"
stop
[ $tap_failed -eq 0 ] || diag_file "$tmp/b.log"

# --- the scheduling policy: SCHED_FIFO by default, CAP_SYS_NICE kept ---------
# policy (1: SCHED_FIFO) and rt_priority of a thread, by its name
sched_of() {
	for t in /proc/"$dpid"/task/*; do
		[ "$(cat "$t/comm")" = "$1" ] && awk '{ print $41, $40 }' "$t/stat"
	done
}
# all_sched PREFIX "POLICY PRIO": every thread whose name starts with PREFIX
# (clockd-tb/: every timer base) has them, and there is one
all_sched() {
	[ "$(threads_sched "$dpid" "$1")" = "${2% *}/${2#* }" ]
}
# threads_are TICK BASES [MAIN]: the tick thread's "policy prio", every
# timer base's, and the main thread's if given. Polled: the daemon
# starts its timer bases after its page is live.
threads_are() {
	[ "$(sched_of clockd-tick)" = "$1" ] && all_sched clockd-tb/ "$2" &&
		{ [ -z "${3:-}" ] || [ "$(sched_of clockd)" = "$3" ]; }
}
run f -o user=nobody
[ "$(field "$dpid" CapEff)" = 0000000000800000 ]
ok $? "defaults: only CAP_SYS_NICE (CapEff $(field "$dpid" CapEff))"
poll "$DEADLINE_S" threads_are "1 40" "1 30" "0 0"
ok $? "defaults: the tick thread SCHED_FIFO 40 ($(sched_of clockd-tick)), every timer thread SCHED_FIFO 30 ($(sched_of clockd-tb/0)), the main thread SCHED_OTHER"
has "$tmp/f.log" 'scheduling: SCHED_FIFO, tick thread at 40, timer threads at 30'
ok $? "the log says so"
stop
[ $tap_failed -eq 0 ] || diag_file "$tmp/f.log"
run d -o user=nobody -o tick_priority=3 -o timer_priority=0
[ "$(field "$dpid" CapEff)" = 0000000000800000 ]
ok $? "tick_priority 3: only CAP_SYS_NICE (CapEff $(field "$dpid" CapEff))"
poll "$DEADLINE_S" threads_are "1 3" "0 0"
ok $? "the tick thread runs SCHED_FIFO 3 ($(sched_of clockd-tick)), the timer threads SCHED_OTHER ($(sched_of clockd-tb/0))"
stop
[ $tap_failed -eq 0 ] || diag_file "$tmp/d.log"
# Started as nobody, with no CAP_SYS_NICE to keep and RLIMIT_RTPRIO 0: one
# warning naming the threads, every thread SCHED_OTHER, and it serves.
mkdir "$tmp/nb" && chown nobody "$tmp/nb"
CLOCKD_SHM=$tmp/nb/page CLOCKD_SOCKET=$tmp/nb/control prlimit --rtprio=0 setpriv --reuid="$nobody_uid" \
	--regid="$nobody_gid" --clear-groups "$CLOCKD" -o page="$tmp/nb/page" -o tick_priority=3 2>"$tmp/e.log" &
dpid=$!
pids="$pids $dpid"
poll "$DEADLINE_S" env CLOCKD_SHM="$tmp/nb/page" "$CLOCKCTL" status >/dev/null 2>&1 ||
	{ diag_file "$tmp/e.log"; bail "clockd as nobody did not go live"; }
poll "$DEADLINE_S" threads_are "0 0" "0 0"
ok $? "without CAP_SYS_NICE: the tick thread ($(sched_of clockd-tick)) and the timer threads ($(sched_of clockd-tb/0)) run SCHED_OTHER"
[ "$(grep -c 'scheduling' "$tmp/e.log")" -eq 1 ] &&
	has "$tmp/e.log" 'scheduling: SCHED_FIFO not permitted \(no CAP_SYS_NICE, RLIMIT_RTPRIO 0\): the tick thread \(tick_priority 3\) and the timer threads \(timer_priority 30\) run SCHED_OTHER instead'
ok $? "one warning line names the threads, the priorities and the limit"
stop
[ $drc -eq 0 ]
ok $? "it stops cleanly (exit $drc)"
[ $tap_failed -eq 0 ] || diag_file "$tmp/e.log"

# --- an unknown user stops the start -----------------------------------------
"$CLOCKD" -o page="$tmp/page" -o user=no-such-user-clockd 2>"$tmp/c.log"
rc=$?
[ $rc -eq 1 ] && has "$tmp/c.log" 'user no-such-user-clockd: no such user'
ok $? "an unknown user is a start error (exit $rc)"

finish
