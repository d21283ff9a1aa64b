#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Statistics logs (logdir, log = tracking, reference, timers): the missing
# directory is made; each file gets a commented header of its columns,
# then a line per update starting with the UTC date and time; a reload
# reopens them by name (logrotate moves them first); a bad `log` value is
# refused naming the key; and contrib/plot/clockd-plot.gp renders the logs
# as a valid PNG and SVG (gnuplot, Debian: gnuplot-nox; skipped without).
. "$top_srcdir/tests/service/lib.sh"
DEADLINE_S=60 # a loaded machine: a line a second, but slowly

logdir=$tmp/clockd-log
log=$tmp/clockd.log
"$CLOCKD" -o page="$tmp/page" -o source=sim -o tick=sim -o reference=sim -o sim_jitter_ns=10000 \
	-o timer_cpus=0 -o logdir="$logdir" -o log="tracking, reference, timers" 2>"$log" &
dpid=$!
pids="$pids $dpid"
poll "$DEADLINE_S" page_live || { diag_file "$log"; bail "clockd did not go live"; }

# lines FILE: data lines (not headers) in FILE
lines() { n=$(grep -c '^[0-9]' "$1" 2>/dev/null); echo "${n:-0}"; }
enough() { [ "$(lines "$logdir/tracking.log")" -ge 4 ] && [ "$(lines "$logdir/timers.log")" -ge 3 ]; }
poll "$DEADLINE_S" enough
ok $? "tracking.log and timers.log fill, a line per update ($(lines "$logdir/tracking.log") and $(lines "$logdir/timers.log"))"
[ -d "$logdir" ] && [ "$(stat -c %a "$logdir")" = 755 ]
ok $? "the missing logdir $logdir was made (0755)"

for k in tracking reference timers; do
	head -n 1 "$logdir/$k.log" | grep -q '^# Date (UTC) Time '
	ok $? "$k.log starts with its header: $(head -n 1 "$logdir/$k.log")"
done
ts='^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6} '
[ "$(lines "$logdir/tracking.log")" -ge 4 ] && ! grep -v '^#' "$logdir/tracking.log" | grep -Evq "${ts}(unlocked|acquiring|locked|holdover) +-?[0-9]+ +[0-9]+ +-?[0-9]+ +-?[0-9]+ +[0-9]+$"
ok $? "tracking.log lines: time, state, offset, RMS, frequency, skew, bound"
last=$(grep '^[0-9]' "$logdir/tracking.log" | tail -n 1 | cut -c1-19)
age=$(($(date -u +%s) - $(date -u -d "$last" +%s 2>/dev/null || echo 0)))
[ "$age" -ge 0 ] && [ "$age" -le 60 ]
ok $? "the time stamp is UTC, now ($last, ${age}s ago)"
# reference.log: the interval of each event after the first is a second
# (the sim reference is 1 PPS; a missed one would show as 2 s).
[ "$(lines "$logdir/reference.log")" -ge 4 ] && ! awk '/^[0-9]/ && $4 != -1 && ($4 < 500000000 || $4 > 1500000000) { bad = 1 } END { exit !bad }' \
	"$logdir/reference.log"
ok $? "reference.log: a line per event, a second apart"
[ "$(lines "$logdir/timers.log")" -ge 3 ] && ! grep '^[0-9]' "$logdir/timers.log" | grep -Evq "${ts}0 +[0-9]+( +[0-9]+){7}$"
ok $? "timers.log: a line per second for CPU 0, its counters and lateness"

# Rotation: moved away, then a reload reopens the file by name.
mv "$logdir/tracking.log" "$logdir/tracking.log.1"
"$CLOCKCTL" reload >/dev/null 2>&1
reopened() { [ -e "$logdir/tracking.log" ] && [ "$(lines "$logdir/tracking.log")" -ge 1 ]; }
poll "$DEADLINE_S" reopened
ok $? "after a reload a moved tracking.log is made anew"
head -n 1 "$logdir/tracking.log" | grep -q '^# Date' && n1=$(lines "$logdir/tracking.log.1") &&
	sleep 2 && [ "$(lines "$logdir/tracking.log.1")" -eq "$n1" ]
ok $? "the new file starts with the header; the moved one no longer grows"

# The plot, from these logs.
if command -v gnuplot >/dev/null 2>&1; then
	gnuplot -e "logdir='$logdir'; out='$tmp/plot.png'" "$top_srcdir/contrib/plot/clockd-plot.gp" 2>"$tmp/gp.err"
	st=$?
	[ $st -eq 0 ] && [ "$(head -c 8 "$tmp/plot.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] &&
		[ "$(dd if="$tmp/plot.png" bs=1 skip=12 count=4 2>/dev/null)" = IHDR ] && [ "$(stat -c %s "$tmp/plot.png")" -gt 10000 ]
	ok $? "clockd-plot.gp renders a PNG (signature, IHDR, $(stat -c %s "$tmp/plot.png" 2>/dev/null) bytes)"
	[ $st -eq 0 ] || diag_file "$tmp/gp.err"
	gnuplot -e "logdir='$logdir'; out='$tmp/plot.svg'" "$top_srcdir/contrib/plot/clockd-plot.gp" 2>"$tmp/gp.err" &&
		/usr/bin/python3 -c '
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
assert root.tag == "{http://www.w3.org/2000/svg}svg", root.tag
assert len(list(root.iter("{http://www.w3.org/2000/svg}path"))) > 10
' "$tmp/plot.svg"
	ok $? "clockd-plot.gp renders an SVG that parses as XML, with paths"
else
	skip "gnuplot not installed (Debian: gnuplot-nox): the plot is not rendered"
	skip "gnuplot not installed (Debian: gnuplot-nox): the plot is not rendered"
fi

kill -TERM "$dpid"
wait "$dpid"
ok $? "the daemon stops cleanly"

"$CLOCKD" --check-config -o log=tracking,bogus >/dev/null 2>"$tmp/err"
[ $? -ne 0 ] && grep -q "log: 'bogus' is not one of" "$tmp/err"
ok $? "log = tracking,bogus is refused naming the key"
"$CLOCKD" --check-config -o logdir=relative/dir >/dev/null 2>"$tmp/err"
[ $? -ne 0 ] && grep -q "logdir: 'relative/dir' is not an absolute path" "$tmp/err"
ok $? "a relative logdir is refused"

finish
