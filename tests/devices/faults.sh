#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Device faults and fallback with the simulated device (sim_script): for
# each fault, the device's state in clockctl sources, the page's fault
# flag, the one log line, the device that took over, and a client reading
# every clock through the fault that never sees one go back.
. "$top_srcdir/tests/daemon/common.sh"
CLOCKCTL=$top_builddir/src/clockctl/clockctl
MONITOR=$top_builddir/tests/devices/monitor

# wait_sources SECONDS ERE: until a line of clockctl sources matches.
wait_sources() {
	i=0
	while [ $i -lt $(($1 * 20)) ]; do
		"$CLOCKCTL" sources 2>/dev/null | grep -Eq "$2" && return 0
		sleep 0.05
		i=$((i + 1))
	done
	"$CLOCKCTL" sources 2>&1 | sed 's/^/# /'
	return 1
}

# one_case NAME EXPECT-ERE LOG-ERE [-o KEY=VALUE]...: run the daemon with a
# fault; the monitor reads through it. Checks the table line, the log
# line, the fault flag and the monitor.
one_case() {
	name=$1 want=$2 logre=$3
	shift 3
	if ! start_daemon "$T/$name.log" -o hz=100 -o stall_ticks=10 "$@"; then
		ok 1 "$name: the daemon starts"
		return
	fi
	"$MONITOR" 4 >"$T/$name.mon" 2>&1 &
	mon=$!
	wait_sources 10 "$want"
	ok $? "$name: clockctl sources shows '$want'"
	grep -Eq "$logre" "$T/$name.log"
	ok $? "$name: the log says '$logre'"
	[ "$(grep -Ec "$logre" "$T/$name.log")" -eq 1 ]
	ok $? "$name: ... once"
	"$CLOCKCTL" status | grep -Eq "^ *flags: .*fault"
	ok $? "$name: the page's fault flag is set"
	wait $mon
	st=$?
	sed 's/^#/# '"$name"':/' "$T/$name.mon"
	ok $st "$name: no clock went back through the fault"
	"$PROBE" reads >/dev/null
	ok $? "$name: every clock reads after the fault"
	stop_daemon TERM
}

# Sources: each fault hands over to posix.
one_case source-stall '^source +sim +fault +stalled' 'source sim .*: stalled: .*now on source posix' \
	-o source=sim,posix -o "sim_script=1s stall"
"$CLOCKCTL" sources 2>/dev/null | grep -Eq '^source +posix +active' ||
	grep -Eq 'now on source posix' "$T/source-stall.log"
ok $? "source-stall: posix took over"
one_case source-step '^source +sim +fault +stepped' 'source sim .*: stepped: .*now on source posix' \
	-o source=sim,posix -o "sim_script=1s step +1s"
one_case source-back '^source +sim +fault +backwards' 'source sim .*: backwards: .*now on source posix' \
	-o source=sim,posix -o "sim_script=1s step -1s"
one_case source-vanish '^source +sim +fault +gone' 'source sim .*: gone: the device disappeared; now on source posix' \
	-o source=sim,posix -o "sim_script=1500ms vanish"

# Tick devices: each fault hands over to timerfd; jiffies go on.
one_case tick-stall '^tick +sim +fault +stalled' 'tick sim .*: stalled: no tick for 100 ms.*now on tick timerfd' \
	-o source=posix -o tick=sim,timerfd -o "sim_script=1s stall"
one_case tick-vanish '^tick +sim +fault +gone' 'tick sim .*: gone: .*now on tick timerfd' \
	-o source=posix -o tick=sim,timerfd -o "sim_script=1s vanish"

# Spurious and missing pulses: counted, not ticks; no fault.
if start_daemon "$T/pulses.log" -o hz=100 -o source=posix -o tick=sim \
	-o "sim_script=500ms spurious 3; 1s miss 4"; then
	j0=$("$CLOCKCTL" --json jiffies | sed -n 's/.*"jiffies_64":\([0-9]*\).*/\1/p')
	wait_sources 10 '^tick +sim +active +none +0 +3 +4 '
	ok $? "pulses: clockctl sources counts 3 spurious and 4 missed pulses"
	grep -q 'spurious: not counted' "$T/pulses.log" && grep -q '4 pulses missing' "$T/pulses.log"
	ok $? "pulses: the log says so, once each"
	sleep 1
	j1=$("$CLOCKCTL" --json jiffies | sed -n 's/.*"jiffies_64":\([0-9]*\).*/\1/p')
	echo "# pulses: jiffies_64 $j0 -> $j1"
	[ -n "$j0" ] && [ -n "$j1" ] && [ "$j1" -gt "$j0" ]
	ok $? "pulses: jiffies go on counting"
	! "$CLOCKCTL" status | grep -Eq "^ *flags: .*fault"
	ok $? "pulses: no fault flag for pulses alone"
	stop_daemon TERM
else
	ok 1 "pulses: the daemon starts"
fi

# log_has LOG RE...: every RE is in LOG; if not, LOG is shown.
log_has() {
	f=$1
	shift
	for re in "$@"; do
		grep -q -- "$re" "$f" || { sed 's/^/# clockd: /' "$f"; return 1; }
	done
}

# until_stale NAME: until every read fails with ESTALE (5 s); true if so.
until_stale() {
	i=0
	while [ $i -lt 100 ]; do
		"$PROBE" reads >"$T/reads"
		st=$?
		[ $st -eq 3 ] && return 0
		sleep 0.05
		i=$((i + 1))
	done
	echo "# $1: probe reads: status $st, state $("$PROBE" state)"
	sed 's/^/# /' "$T/reads"
	return 1
}

# A tick device with no fallback that stalls for a while: readers
# extrapolate for the bound (1 s here), then get ESTALE, then it is taken
# back.
if start_daemon "$T/recover.log" -o hz=100 -o source=posix -o tick=sim -o stall_ticks=5 \
	-o extrapolate_max_s=1 -o "sim_script=1s stall 3s"; then
	# Past the bound the fine reads fail by the page's age; every read
	# fails once the watchdog raises the alarm, within a watchdog period.
	until_stale recover
	ok $? "recover: during the stall every read fails with ESTALE"
	"$PROBE" live 10
	ok $? "recover: live again when the pulses come back"
	log_has "$T/recover.log" 'no other tick device is configured' 'tick sim .*: ticking again'
	ok $? "recover: the log says stalled, then ticking again"
	wait_sources 5 '^tick +sim +active +stalled +1 '
	ok $? "recover: clockctl sources shows it active again, 1 fault"
	stop_daemon TERM
else
	ok 1 "recover: the daemon starts"
fi

# A source with no fallback that jumps: readers get ESTALE; it is read on
# probation at every tick, and taken back once it has behaved for
# source_recover_s; no clock goes back through it all.
if start_daemon "$T/srecover.log" -o hz=100 -o source=sim -o source_recover_s=2 \
	-o "sim_script=1s step +1s"; then
	"$MONITOR" 7 >"$T/srecover.mon" 2>&1 &
	mon=$!
	until_stale source-recover
	ok $? "source-recover: after the jump every read fails with ESTALE"
	t0=$(date +%s%N)
	"$PROBE" live 10
	ok $? "source-recover: live again once it has behaved for 2 s"
	echo "# source-recover: ESTALE for $((($(date +%s%N) - t0) / 1000000)) ms after the first stale read"
	log_has "$T/srecover.log" 'source sim .*: stepped: .*no other source is configured, readers get ESTALE' \
		'source sim .*: behaved for 2 s since its fault; back in use'
	ok $? "source-recover: the log says stepped, then back in use"
	wait_sources 5 '^source +sim +active +stepped +1 '
	ok $? "source-recover: clockctl sources shows it active again, 1 fault"
	"$CLOCKCTL" status | grep -Eq "^ *flags: .*fault"
	ok $? "source-recover: the page's fault flag stays set"
	wait $mon
	st=$?
	sed 's/^#/# source-recover:/' "$T/srecover.mon"
	ok $st "source-recover: no clock went back through the fault and the probation"
	stop_daemon TERM
else
	ok 1 "source-recover: the daemon starts"
fi
# source_recover_s 0: the faulted source stays faulted.
if start_daemon "$T/snorecover.log" -o hz=100 -o source=sim -o source_recover_s=0 \
	-o "sim_script=1s step +1s"; then
	until_stale source-norecover
	sleep 3
	"$PROBE" reads >/dev/null
	st=$?
	[ $st -eq 3 ] && ! grep -q 'back in use' "$T/snorecover.log"
	ok $? "source_recover_s 0: reads still fail with ESTALE 3 s on (status $st), never taken back"
	# The tick thread waits for its ticks meanwhile: it once re-armed its
	# timerfd at the same past deadline without end, a SCHED_FIFO spin
	# that starved the timer base on its CPU (and SIGTERM then hung).
	cpu0=$(cat /proc/"$daemon_pid"/task/*/schedstat | awk '{ s += $1 } END { print s }')
	sleep 2
	cpu1=$(cat /proc/"$daemon_pid"/task/*/schedstat | awk '{ s += $1 } END { print s }')
	[ $((cpu1 - cpu0)) -lt 600000000 ]
	ok $? "source_recover_s 0: the daemon idles meanwhile ($(((cpu1 - cpu0) / 20000000)) % of a CPU over 2 s)"
	stop_daemon TERM
	# The alarm was that daemon's: the next one on the page starts clear.
	if start_daemon "$T/snorecover2.log" -o hz=100 -o source=posix; then
		"$PROBE" reads >/dev/null
		ok $? "a daemon restarted on the page of one whose source faulted serves every read"
		stop_daemon TERM
	else
		ok 1 "a daemon restarted on the page of one whose source faulted goes live"
	fi
else
	ok 1 "source-norecover: the daemon starts"
fi

# A device missing at start: the next one is used, or the daemon refuses
# to start with one line naming the device.
one_case absent '^source +sim +unavailable +open' 'source sim: no such device' \
	-o source=sim,posix -o "sim_script=0s vanish"
"$CLOCKD" -o page="$T/page2" -o source=sim -o "sim_script=0s vanish" 2>"$T/absent2.log"
st=$?
sed 's/^/# /' "$T/absent2.log"
[ $st -eq 1 ] && grep -q '^clockd: source sim: no such device' "$T/absent2.log" && [ ! -e "$T/page2" ]
ok $? "absent: with no other source the daemon exits 1 naming the device, no page"
"$CLOCKD" -o page="$T/page2" -o tick=rtc -o rtc_device=/nonexistent/rtc9 2>"$T/absent3.log"
st=$?
sed 's/^/# /' "$T/absent3.log"
[ $st -eq 1 ] && grep -q 'rtc.*/nonexistent/rtc9' "$T/absent3.log"
ok $? "absent: a missing rtc device: exit 1, the message names the path"

finish
