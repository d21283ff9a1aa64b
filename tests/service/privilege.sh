#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Privilege drop, seen from outside: started as root with -o user=nobody,
# clockd runs as nobody (all four uids and gids in /proc/PID/status), with
# no capability left (effective, permitted, bounding), yet serves: the page
# (0644, its group the daemon's) is live and the control socket (0660, its
# group the daemon's) answers clockctl timers. With timer_priority > 0 it
# keeps exactly CAP_SYS_NICE; page_mode/page_group and socket_group set
# the files' access. With tick_priority > 0 the tick thread runs
# SCHED_FIFO (CAP_SYS_NICE kept); started without the capability, that is
# a start error. An unknown user is a start error.
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
	wait_for "live" page_live || { diag "$tmp/$name.log"; bail "clockd $* did not go live"; }
}
stop() { kill -TERM "$dpid"; wait "$dpid"; drc=$?; }

# --- user nobody, no capability ------------------------------------------------
run a -o user=nobody
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
"$CLOCKCTL" timers --socket "$tmp/control" >"$tmp/timers" 2>&1
ok $? "the control socket serves (clockctl timers)"
has "$tmp/a.log" "privileges: running as uid $nobody_uid gid $nobody_gid, capabilities: none"
ok $? "the log says who the daemon became"
stop
[ $drc -eq 0 ]
ok $? "it stops cleanly as nobody (exit $drc)"
[ $tap_failed -eq 0 ] || diag "$tmp/a.log"

# --- timer_priority keeps CAP_SYS_NICE; page and socket groups --------------
run b -o user=nobody -o timer_priority=1 -o page_mode=0640 -o page_group="$nobody_group" \
	-o socket_group=root
# CAP_SYS_NICE is capability 23.
[ "$(field "$dpid" CapEff)" = 0000000000800000 ] && [ "$(field "$dpid" CapPrm)" = 0000000000800000 ]
ok $? "timer_priority 1: only CAP_SYS_NICE (CapEff $(field "$dpid" CapEff))"
[ "$(stat -c '%a %g' "$tmp/page")" = "640 $nobody_gid" ]
ok $? "page_mode 0640, page_group $nobody_group: $(stat -c '%a %U %G' "$tmp/page")"
[ "$(stat -c '%a %g' "$tmp/control")" = "660 0" ]
ok $? "socket_group root: $(stat -c '%a %U %G' "$tmp/control")"
stop
[ $tap_failed -eq 0 ] || diag "$tmp/b.log"

# --- tick_priority: the tick thread at SCHED_FIFO, CAP_SYS_NICE kept ---------
# policy (1: SCHED_FIFO) and rt_priority of a thread, by its name
sched_of() {
	for t in /proc/"$dpid"/task/*; do
		[ "$(cat "$t/comm")" = "$1" ] && awk '{ print $41, $40 }' "$t/stat"
	done
}
run d -o user=nobody -o tick_priority=3
[ "$(field "$dpid" CapEff)" = 0000000000800000 ]
ok $? "tick_priority 3: only CAP_SYS_NICE (CapEff $(field "$dpid" CapEff))"
[ "$(sched_of clockd-tick)" = "1 3" ] && [ "$(sched_of clockd-tb/0)" = "0 0" ]
ok $? "the tick thread runs SCHED_FIFO 3 ($(sched_of clockd-tick)), the timer threads SCHED_OTHER ($(sched_of clockd-tb/0))"
stop
[ $tap_failed -eq 0 ] || diag "$tmp/d.log"
# Started as nobody, with no CAP_SYS_NICE to keep: a start error naming it.
mkdir "$tmp/nb" && chown nobody "$tmp/nb"
setpriv --reuid="$nobody_uid" --regid="$nobody_gid" --clear-groups \
	"$CLOCKD" -o page="$tmp/nb/page" -o tick_priority=3 2>"$tmp/e.log"
rc=$?
[ $rc -eq 1 ] && has "$tmp/e.log" 'tick_priority 3: SCHED_FIFO refused \(EPERM\): it needs CAP_SYS_NICE'
ok $? "tick_priority without CAP_SYS_NICE is a start error naming it (exit $rc)"
[ $tap_failed -eq 0 ] || diag "$tmp/e.log"

# --- an unknown user stops the start -----------------------------------------
"$CLOCKD" -o page="$tmp/page" -o user=no-such-user-clockd 2>"$tmp/c.log"
rc=$?
[ $rc -eq 1 ] && has "$tmp/c.log" 'user no-such-user-clockd: no such user'
ok $? "an unknown user is a start error (exit $rc)"

done_testing
