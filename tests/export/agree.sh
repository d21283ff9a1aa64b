#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The SOCK export is exact: clockd sends each sample both to an NTP SHM
# segment (nanosecond fields) and to chrony's SOCK socket (tv in
# microseconds, offset a double); a real chronyd -x of the test's own reads
# both and logs each raw sample (log refclocks). The two raw offsets of
# the same sample (same system time) agree within 200 ns, over at least 4
# samples each. (The SOCK offset once carried the 0 to 1 us that tv's
# truncation dropped: +335 ns on average.)
. "$top_srcdir/tests/export/lib.sh"

need_chrony

free_unit 40 59 || exit 99
sock=$T/chrony.sock

cat >"$T/chrony.conf" <<CONF
pidfile $T/chronyd.pid
driftfile $T/chrony.drift
logdir $T
log refclocks
cmdport 0
port 0
refclock SHM $unit refid CLKD poll 2
refclock SOCK $sock refid CSOK poll 2
CONF
"$CHRONYD" -x -d -u root -f "$T/chrony.conf" >"$T/chronyd.log" 2>&1 &
chronyd_pid=$!
poll 10 test -S "$sock"
ok $? "chronyd -x creates its SOCK socket"

# A disciplined clockd, so that its realtime is off the system's by a
# fraction of a microsecond that changes from sample to sample.
start_daemon "$T/clockd.log" -o source=posix -o posix_clock=monotonic -o tick=timerfd \
	-o reference=sim -o sim_rate_ppm=20 -o sim_jitter_ns=10000 \
	-o ntp_shm_unit="$unit" -o chrony_sock="$sock"
ok $? "clockd starts exporting to SHM unit $unit and $sock"

# pairs: the raw offsets of each sample both refclocks logged, side by
# side ("TIME SHM SOCK", seconds); the log's time is the sample's system
# time to the microsecond. A filtered sample's line has "-" for the raw
# offset, and its time can be a raw sample's time (a filter that kept one
# sample): only raw lines are paired.
pairs() {
	awk '($3 == "CLKD" || $3 == "CSOK") && $7 != "-" { o[$3, $1 " " $2] = $7; t[$1 " " $2] = 1 }
	END { for (k in t) if ((("CLKD", k) in o) && (("CSOK", k) in o)) print k, o["CLKD", k], o["CSOK", k] }' \
		"$T/refclocks.log" 2>/dev/null | sort >"$T/pairs"
	[ "$(wc -l <"$T/pairs")" -ge 8 ]
}
poll 40 pairs
ok $? "chronyd logged at least 8 samples of each refclock at the same system times"
head -4 "$T/pairs" | sed 's/^/# time, SHM, SOCK: /'
awk '{ d = ($3 - $4) * 1e9; if (d < 0) d = -d; if (d > max) max = d; s += $4 - $3; n++ }
	END { printf "# %d samples: SOCK - SHM mean %+.0f ns, largest |difference| %.0f ns\n", n, s * 1e9 / n, max }' \
	"$T/pairs"
awk '{ d = ($3 - $4) * 1e9; if (d > 200 || d < -200) bad++ } END { exit bad > 0 || NR < 4 }' "$T/pairs"
ok $? "SOCK and SHM raw offsets of the same samples agree within 200 ns"
finish
