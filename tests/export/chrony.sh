#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# clockd as a refclock of the real chronyd: clockd starts first (its SHM
# segment 0600, chronyd's SOCK socket not there yet), then a chronyd of the
# test's own (own config, pid file, drift file and command socket; no NTP
# port, no servers; -x: it never touches the system clock) with a
# "refclock SHM" and a "refclock SOCK" line. chronyc must show both
# refclocks reached and their last offsets below 1 ms.
. "$top_srcdir/tests/export/lib.sh"

need_chrony

free_unit 7 39 || exit 99
sock=$T/chrony.sock
cmdsock=$T/chronyd.sock

# posix_clock monotonic: clockd's realtime follows the kernel's, so the
# offsets chronyd sees measure the export, not the host's NTP frequency.
start_daemon "$T/clockd.log" -o source=posix -o posix_clock=monotonic -o tick=timerfd \
	-o ntp_shm_unit="$unit" -o chrony_sock="$sock"
ok $? "clockd starts exporting to SHM unit $unit and $sock (chronyd not there yet)"

# SOCK poll 3: chronyd wants at least 4 samples in its filter per poll
# and clockd sends one a second.
cat >"$T/chrony.conf" <<CONF
pidfile $T/chronyd.pid
driftfile $T/chrony.drift
bindcmdaddress $cmdsock
cmdport 0
port 0
refclock SHM $unit refid CLKD poll 0
refclock SOCK $sock refid CSOK poll 3
CONF
"$CHRONYD" -x -d -u root -f "$T/chrony.conf" >"$T/chronyd.log" 2>&1 &
chronyd_pid=$!
t0=$(date +%s)

# reach_of REFID: the Reach column of chronyc's CSV sources (octal).
sources() { "$CHRONYC" -h "$cmdsock" -n -c sources 2>/dev/null >"$T/sources"; }
reach_of() { awk -F, -v id="$1" '$3 == id { print $6 }' "$T/sources"; }
reached() {
	sources || return 1
	r1=$(reach_of CLKD) r2=$(reach_of CSOK)
	[ -n "$r1" ] && [ "$r1" != 0 ] && [ -n "$r2" ] && [ "$r2" != 0 ]
}
poll 40 reached
ok $? "chronyc sources: both CLKD (SHM) and CSOK (SOCK) reached within 40 s"
echo "# reached after $(($(date +%s) - t0)) s"
# A few more polls for steadier figures.
sleep 10
sources
"$CHRONYC" -h "$cmdsock" -n sources 2>&1 | sed 's/^/# /'
"$CHRONYC" -h "$cmdsock" -n sourcestats 2>&1 | sed 's/^/# /'

for id in CLKD CSOK; do
	awk -F, -v id="$id" '$3 == id {
		o = $9 < 0 ? -$9 : $9
		printf "# %s: reach %s, last offset %.0f ns +/- %.0f ns\n", id, $6, $9 * 1e9, $10 * 1e9
		found = 1; ok = $6 != 0 && o < 0.001
	} END { exit !(found && ok) }' "$T/sources"
	ok $? "$id: reachable, last measured offset below 1 ms"
done

grep -q "Disabled control of system clock" "$T/chronyd.log"
ok $? "chronyd ran with control of the system clock disabled (-x)"
grep -q "chrony SOCK $sock: sending samples" "$T/clockd.log"
ok $? "clockd connected to chronyd's socket once it appeared"
[ "$("$EXPTOOL" stat "$unit" | cut -d' ' -f2)" = 0600 ]
ok $? "the segment chronyd reads is 0600"

kill "$chronyd_pid"; wait "$chronyd_pid"; chronyd_pid=
sed 's/^/# chronyd: /' "$T/chronyd.log"
kill -0 "$daemon_pid"
ok $? "clockd keeps running when chronyd goes"
finish
