#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The system reference with chronyd disciplining the kernel: a chronyd
# server on loopback whose clock is 3 ms ahead (the trap preload shifts its
# CLOCK_REALTIME; it does not touch the clock, -x) and a chronyd client of
# it polling 8 times a second, which slews the kernel's clock towards it
# (at most 400 ppm, within discipline_max_ppm) for 12 s. CLOCKD_REALTIME
# keeps within 10 us of CLOCK_REALTIME (2 us at the 99th percentile) and
# CLOCKD_MONOTONIC drifts at most 10 us from CLOCK_MONOTONIC. The client is
# stopped and the kernel's frequency and tick restored on exit; what offset it
# slewed in stays (3 ms at most, as a chronyd would leave it).
. "$top_srcdir/tests/sysref/common.sh"

[ "$(id -u)" -eq 0 ] || { echo "1..0 # SKIP needs root (chronyd adjusts the clock)"; exit 0; }
CHRONYD=$(command -v chronyd || echo /usr/sbin/chronyd)
[ -x "$CHRONYD" ] || { echo "1..0 # SKIP chronyd is not installed"; exit 0; }
# One that does not touch the clock (-x, as tests/export's) is no matter.
pgrep -a -x chronyd | grep -qv -- ' -x' && { echo "1..0 # SKIP a chronyd already steers the clock here"; exit 0; }
lock_clock
freq0=$("$FOLLOW" freq) && "$FOLLOW" setfreq "$freq0" 2>/dev/null ||
	{ echo "1..0 # SKIP adjtimex ADJ_FREQUENCY not permitted here"; exit 0; }
preload=$top_builddir/tests/daemon/.libs/trap-preload.so
[ -f "$preload" ] || { echo "Bail out! $preload not built"; exit 99; }
# The server chronyd, not built here, runs with the trap preload: a
# sanitizer's preload needs its runtime loaded first, which chronyd's is
# not (it aborts). The plain build runs this test.
if grep -q '^CFLAGS = .*-fsanitize' "$top_builddir/Makefile"; then
	"$FOLLOW" setfreq "$freq0"
	skip_all "a sanitizer build's trap preload cannot run in chronyd (the plain build runs this test)"
fi
port=$((20000 + $$ % 10000))
server= client=
restore() {
	[ -n "$client" ] && kill "$client" 2>/dev/null && wait "$client" 2>/dev/null
	[ -n "$server" ] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null
	"$FOLLOW" setfreq "$freq0"
	cleanup
}
trap restore EXIT

start_daemon "$T/log" || { ok 1 "start"; finish; }
wait_state locked 10
ok $? "locked to the system reference"

echo 3000000 >"$T/offset"
cat >"$T/server.conf" <<CONF
port $port
bindaddress 127.0.0.1
allow 127.0.0.1
local stratum 5
cmdport 0
pidfile $T/server.pid
CONF
cat >"$T/client.conf" <<CONF
server 127.0.0.1 port $port minpoll -3 maxpoll -3 iburst
maxslewrate 400
port 0
cmdport 0
pidfile $T/client.pid
CONF
LD_PRELOAD="$preload" CLOCKD_TEST_REALTIME_OFFSET="$T/offset" \
	"$CHRONYD" -d -x -f "$T/server.conf" >"$T/server.log" 2>&1 &
server=$!
sleep 1
"$CHRONYD" -d -f "$T/client.conf" >"$T/client.log" 2>&1 &
client=$!
"$FOLLOW" 14 >"$T/chrony" 2>&1
ok $? "sampled for 14 s with chronyd slewing the kernel"
freq=$("$FOLLOW" freq)
[ "$freq" != "$freq0" ]
ok $? "chronyd moved the kernel's frequency (freq,tick $freq0 -> $freq)"
kill "$client" 2>/dev/null
wait "$client" 2>/dev/null
client=
"$FOLLOW" setfreq "$freq0"
sed 's/^/# chronyd client: /' "$T/client.log" | tail -8
grep -Eq 'Selected source 127.0.0.1' "$T/client.log"
ok $? "chronyd selected the local server"
check_follow chronyd "$T/chrony"
show_log "$T/log" | head -20
stop_daemon TERM
finish
