# SPDX-License-Identifier: LGPL-2.1-or-later
# clockd-plot.gp: plot clockd's statistics logs (clockd.conf: logdir, log
# tracking, timers) over time: the offset to the reference with the error
# bound, the frequency correction, and the lateness of the timers per CPU.
#
#     gnuplot -e "logdir='/var/log/clockd'; out='clockd.svg'" clockd-plot.gp
#
# out ending in .svg writes SVG, else PNG (pngcairo). Missing logs leave
# their panel out. The time is UTC, as the logs write it.

if (!exists("logdir")) logdir = "/var/log/clockd"
if (!exists("out")) out = "clockd.png"
tracking = logdir . "/tracking.log"
timers = logdir . "/timers.log"

if (out[strlen(out)-3:] eq ".svg") {
	set terminal svg size 1000,900 dynamic background rgb "white"
} else {
	set terminal pngcairo size 1000,900
}
set output out

# A file with at least one data line: stats succeeds on it.
has(f) = system("grep -qs '^[0-9]' '" . f . "' && echo 1 || echo 0") + 0
have_tracking = has(tracking)
have_timers = has(timers)
panels = 2 * have_tracking + have_timers
if (panels == 0) {
	set title "no statistics in " . logdir
	unset border; unset tics
	plot [0:1][0:1] 1/0 notitle
	exit
}

set xdata time
set timefmt "%Y-%m-%d %H:%M:%S"
set format x "%H:%M:%S"
set grid
set key top right
set multiplot layout panels,1 title "clockd (" . logdir . ")"

# tracking.log: 1-2 date time, 3 state, 4 offset, 5 RMS, 6 frequency (ppb),
# 7 skew, 8 bound (ns)
if (have_tracking) {
	set title "offset to the reference and error bound"
	set ylabel "us"
	plot tracking using 1:($4/1000) with lines lw 2 title "offset", \
	     tracking using 1:($8/1000) with lines dt 2 title "bound", \
	     tracking using 1:(-$8/1000) with lines dt 2 lc 2 notitle
	set title "frequency correction"
	set ylabel "ppm"
	plot tracking using 1:($6/1000) with lines lw 2 title "frequency", \
	     tracking using 1:(($6+$7)/1000) with lines dt 3 title "+- skew", \
	     tracking using 1:(($6-$7)/1000) with lines dt 3 lc 2 notitle
}

# timers.log: 1-2 date time, 3 CPU, ... 10 lateness p99, 11 max (ns)
if (have_timers) {
	set title "timer lateness per CPU (p99 of recent expiries)"
	set ylabel "us"
	maxcpu = system("awk '/^[0-9]/ && $3 > m { m = $3 } END { print m + 0 }' '" . timers . "'") + 0
	plot for [c=0:maxcpu] timers using 1:(int($3) == c ? $10/1000 : 1/0) with linespoints title sprintf("CPU %d", c)
}
unset multiplot
