#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Serving clockd time to the network, end to end on loopback: clockd
# disciplined to the simulated 1 PPS, whose pulses come 5 ms after the
# system's whole seconds, so that its realtime sits 5 ms behind the
# kernel's; a chronyd -x with clockd as its SOCK refclock, serving NTP on
# 127.0.0.1 at a port of its own; a second chronyd -x, its client (own port
# 0, paths and command socket; the server noselect, so the client measures
# it and steers nothing). The client's measured offset of the server must
# equal clockd's realtime offset to the kernel's, as clockctl time shows
# it, within 50 us. -x: neither chronyd touches the machine's clock.
. "$top_srcdir/tests/export/lib.sh"

CLOCKCTL=$top_builddir/src/clockctl/clockctl
need_chrony

client_pid=
serve_cleanup() {
	if [ -n "$client_pid" ]; then
		kill "$client_pid" 2>/dev/null
		wait "$client_pid" 2>/dev/null
	fi
	export_cleanup
}
trap serve_cleanup EXIT

# A port of the test's own: not 123, and apart from parallel runs.
port=$((20000 + $$ % 20000))
sock=$T/chrony.sock

start_daemon "$T/clockd.log" -o source=posix -o posix_clock=monotonic -o tick=timerfd \
	-o reference=sim -o sim_jitter_ns=1000 -o discipline_step_ms=1 -o "sim_script=0s step -5ms" \
	-o chrony_sock="$sock"
ok $? "clockd starts, disciplined to the simulated PPS 5 ms after the system's seconds"

mkdir -m 700 "$T/server" "$T/client" # chronyd wants its socket's folder private
cat >"$T/server/chrony.conf" <<CONF
pidfile $T/server/chronyd.pid
driftfile $T/server/drift
bindcmdaddress $T/server/cmd.sock
cmdport 0
port $port
bindaddress 127.0.0.1
allow 127.0.0.1
refclock SOCK $sock refid CLKD poll 2
CONF
cat >"$T/client/chrony.conf" <<CONF
pidfile $T/client/chronyd.pid
driftfile $T/client/drift
bindcmdaddress $T/client/cmd.sock
cmdport 0
port 0
server 127.0.0.1 port $port minpoll 0 maxpoll 0 iburst noselect
CONF
"$CHRONYD" -x -d -u root -f "$T/server/chrony.conf" >"$T/server/log" 2>&1 &
chronyd_pid=$!
"$CHRONYD" -x -d -u root -f "$T/client/chrony.conf" >"$T/client/log" 2>&1 &
client_pid=$!

# clockd's realtime offset (clockd - kernel, ns) as clockctl time shows it.
clockd_offset() {
	"$CLOCKCTL" --json time | sed -n 's/.*"realtime":{[^}]*"diff_ns":\(-\{0,1\}[0-9]*\).*/\1/p'
}
# The client's measured offset of the server (local - server, ns), and
# the server's state as the client sees it.
client_offset() {
	"$CHRONYC" -h "$T/client/cmd.sock" -n -c sources 2>/dev/null |
		awk -F, '$3 == "127.0.0.1" && $6 != 0 { printf "%.0f\n", $9 * 1e9 }'
}
# agree: clockd's offset and the client's (opposite signs) within 50 us,
# three polls in a row.
agreed=0
agree() {
	c=$(clockd_offset) n=$(client_offset)
	if [ -n "$c" ] && [ -n "$n" ] && [ $((c + n)) -le 50000 ] && [ $((c + n)) -ge -50000 ]; then
		agreed=$((agreed + 1))
	else
		agreed=0
	fi
	echo "# clockd realtime - kernel: ${c:-?} ns; client: kernel - server ${n:-?} ns"
	[ $agreed -ge 3 ] || { sleep 1; return 1; }
}
i=0
until agree || [ $i -ge 90 ]; do i=$((i + 1)); done >"$T/progress"
tail -6 "$T/progress"
[ $agreed -ge 3 ]
ok $? "the client's offset of the server equals clockd's realtime offset within 50 us (3 polls in a row)"
c=$(clockd_offset)
[ -n "$c" ] && [ "${c#-}" -gt 4000000 ]
ok $? "clockd's realtime sits visibly off the kernel's (${c:-?} ns)"

"$CHRONYC" -h "$T/server/cmd.sock" -n tracking 2>&1 | sed 's/^/# server: /'
"$CHRONYC" -h "$T/client/cmd.sock" -n sources 2>&1 | sed 's/^/# client: /'
grep -q "Disabled control of system clock" "$T/server/log" &&
	grep -q "Disabled control of system clock" "$T/client/log"
ok $? "both chronyd ran with control of the system clock disabled (-x)"
finish
