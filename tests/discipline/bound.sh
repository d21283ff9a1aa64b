#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The error bound against the truth: five daemons at once, each on its own
# simulated 1 PPS, sampled every 100 ms (bound.c) for 95 s at most, the
# true error computed afterwards from the simulation's truth in each log.
# While locked (SYNCED) or in holdover the bound contains the true error in
# every sample; in a clean lock its median is at most 10 times the true RMS.
#   j1     1 us of jitter, 20 ppm
#   j10    10 us of jitter, 100 ppm
#   r10k   10 000 ppm (discipline_max_ppm 20 000), 10 us of jitter
#   faults 10 us of jitter: late pulses (70 ms, 150 us), a 2 ms step
#          (restepped), a 2 s stall (still locked) and a 6 s one (holdover
#          and back)
#   hold   10 us of jitter, 100 ppm, silent from 30 s: 60 s of holdover
. "$top_srcdir/tests/discipline/common.sh"
BOUND=$top_builddir/tests/discipline/bound
pids=

# run NAME SECONDS OPTION...: a daemon on $T/NAME and its sampler.
run() {
	name=$1 secs=$2
	shift 2
	mkdir "$T/$name"
	# shellcheck disable=SC2086 # $tick_prio is empty or two words
	"$CLOCKD" -o page="$T/$name/page" $tick_prio -o hz=100 -o source=posix -o posix_clock=monotonic \
		-o reference=sim "$@" >"$T/$name/log" 2>&1 &
	pids="$pids $!"
	CLOCKD_SHM=$T/$name/page "$PROBE" live 10 || return 1
	CLOCKD_SHM=$T/$name/page "$BOUND" sample "$secs" >"$T/$name/samples" 2>"$T/$name/sampler" &
	eval "sampler_$name=\$!"
}

kill_all() {
	for p in $pids; do
		kill -9 "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	rm -rf "$T"
}
trap kill_all EXIT

started=0
run j1 45 -o sim_rate_ppm=20 -o sim_jitter_ns=1000 -o sim_seed=3 &&
run j10 60 -o sim_rate_ppm=100 -o sim_jitter_ns=10000 -o sim_seed=5 &&
run r10k 60 -o sim_rate_ppm=10000 -o discipline_max_ppm=20000 -o sim_jitter_ns=10000 &&
run faults 95 -o sim_rate_ppm=20 -o sim_jitter_ns=10000 -o discipline_restep_ms=1 \
	-o "sim_script=25s late 70ms; 30s late 150us; 40s step -2ms; 62s stall 2s; 72s stall 6s" &&
run hold 95 -o sim_rate_ppm=100 -o sim_jitter_ns=10000 -o "sim_script=30s stall" &&
started=1
ok $((1 - started)) "five daemons start on the simulated reference"
[ $started -eq 1 ] || finish

# shellcheck disable=SC2154 # set by run's eval
for s in "$sampler_j1" "$sampler_j10" "$sampler_r10k" "$sampler_faults" "$sampler_hold"; do
	wait "$s"
done

# result NAME: "SYNCED IN_SYNCED HOLDOVER IN_HOLDOVER RMS MEDIAN_BOUND MAX HOLD_S"
result() {
	"$BOUND" check "$T/$1/log" "$T/$1/samples" >"$T/$1/check"
	grep '^#' "$T/$1/check" | head -20
	# shellcheck disable=SC2046 # eight words
	set -- $(grep -v '^#' "$T/$1/check")
	r_synced=$1 r_in=$2 r_hold=$3 r_hold_in=$4 r_rms=$5 r_median=$6 r_max=$7 r_hold_s=$8
	echo "# $name: locked $r_synced samples, bound held in $r_in; holdover $r_hold over $r_hold_s s, held in $r_hold_in;" \
		"true RMS $r_rms ns, max $r_max ns, median bound $r_median ns"
}

for name in j1 j10 r10k faults hold; do
	result $name
	[ "${r_synced:-0}" -gt 100 ] && [ "$r_in" -eq "$r_synced" ]
	ok $? "$name: the bound contains the true error in every locked sample ($r_in of $r_synced)"
	case $name in
	j1 | j10 | r10k)
		awk -v m="$r_median" -v r="$r_rms" 'BEGIN { exit !(m > 0 && m <= 10 * r) }'
		ok $? "$name: the median bound, $r_median ns, is at most 10 times the true RMS, $r_rms ns"
		;;
	faults)
		[ "${r_hold:-0}" -gt 10 ] && [ "$r_hold_in" -eq "$r_hold" ]
		ok $? "$name: holdover in the long stall, the bound held ($r_hold_in of $r_hold)"
		grep -q 'holdover -> locked' "$T/$name/log"
		ok $? "$name: locked again after the stall"
		;;
	hold)
		# From 33 s to 95 s: 60 s of holdover, about 10 samples a
		# second (fewer on a loaded machine).
		[ "${r_hold:-0}" -ge 300 ] && [ "$r_hold_in" -eq "$r_hold" ] &&
			awk -v s="$r_hold_s" 'BEGIN { exit !(s >= 59) }'
		ok $? "$name: $r_hold_s s of holdover, the bound held in every sample ($r_hold_in of $r_hold)"
		;;
	esac
	grep -E 'reference sim|truth' "$T/$name/log" | head -12 | sed "s/^/# $name: /"
done
finish
