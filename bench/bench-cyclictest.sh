#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# cyclictest (Debian's rt-tests) plainly and under libclockd-preload.so,
# same options, side by side against a private daemon (HZ=1000, its
# default clocksource): REPS repetitions, each CHUNKS short runs of each
# in alternating order (so both see the same machine, bursts of load
# from elsewhere included); per repetition the wake-up
# latency p50 and p99 of each and their ratios (preload / plain), then
# the figures of all the repetitions' histograms summed. Under the library
# cyclictest's clock_gettime and clock_nanosleep(CLOCK_MONOTONIC,
# TIMER_ABSTIME) are clockd's: it sleeps on the kernel's clock to a little
# short of the wake-up and spins the rest on clockd's.
#
#   bench-cyclictest.sh BUILDDIR [LABEL]
#   CYCLICTEST_OPTS  the options (default below); -h US is needed
#   BENCH_REPS       repetitions (5)
#   BENCH_CHUNKS     runs of each side per repetition (5)
#   BENCH_P99        the p99 ratio target (1.2)
set -eu
builddir=${1:?usage: bench-cyclictest.sh BUILDDIR [LABEL]}
label=${2:-}
opts=${CYCLICTEST_OPTS:--m -q -l 1000 -i 1000 -h 10000 -t 1 -a 0}
reps=${BENCH_REPS:-5}
chunks=${BENCH_CHUNKS:-5}
target=${BENCH_P99:-1.2}
lib=$builddir/src/libclockd/.libs/libclockd-preload.so
pre="LD_PRELOAD=$lib CLOCKD_PRELOAD=refuse"
# BENCH_AA=1: the "preload" side runs plainly too, for the noise floor
# (how far apart two identical sides come out on this machine).
[ -z "${BENCH_AA:-}" ] || pre="CLOCKD_BENCH_AA=1"

if ! command -v cyclictest >/dev/null 2>&1; then
	echo "  skipped: cyclictest is not installed (Debian package rt-tests)"
	exit 0
fi
[ -f "$lib" ] || { echo "bench-cyclictest: $lib not built" >&2; exit 1; }

dir=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$dir"; }
trap cleanup EXIT INT TERM

"$builddir/src/clockd/clockd" -o page="$dir/page" -o hz=1000 2>"$dir/clockd.log" &
pid=$!
export CLOCKD_SHM="$dir/page"
i=0
until "$builddir/src/clockctl/clockctl" status >/dev/null 2>&1; do
	i=$((i + 1)); [ $i -lt 100 ] || { cat "$dir/clockd.log"; echo "bench-cyclictest: daemon did not come up" >&2; exit 1; }
	sleep 0.1
done
res=$("$builddir/src/clockctl/clockctl" time | awk '$1 == "monotonic" { print $3 " " $4 }')
echo "  cyclictest $opts${label:+; $label}; $reps repetitions of $chunks runs a side, alternating; clockd CLOCKD_MONOTONIC resolution $res"

# run NAME [VAR=VALUE]...: cyclictest into $dir/NAME
run() {
	name=$1; shift
	# shellcheck disable=SC2086
	env "$@" cyclictest $opts >"$dir/$name" 2>"$dir/$name.err" || { cat "$dir/$name.err" >&2; exit 1; }
}

# stats FILE...: "p50 p99 max count" in us from cyclictest -h histograms,
# summed (overflows past the last bucket count as beyond it).
stats() {
	awk 'BEGIN { n = 0 } /^[0-9]+ +[0-9]+$/ { b[$1 + 0] = 1; c[$1 + 0] += $2; total += $2; if ($1 + 0 > last) last = $1 + 0 }
	     /^# Histogram Overflows:/ { total += $4 }
	     /^# Max Latencies:/ { if ($4 + 0 > max) max = $4 + 0 }
	     END {
		p50 = p99 = -1; cum = 0
		for (i = 0; i <= last; i++) {
			cum += c[i]
			if (p50 < 0 && cum >= 0.50 * total) p50 = i
			if (p99 < 0 && cum >= 0.99 * total) p99 = i
		}
		if (p50 < 0) p50 = ">" last
		if (p99 < 0) p99 = ">" last
		print p50, p99, max, total }' "$@"
}

ratio() { awk -v x="$1" -v y="$2" 'BEGIN { print ((x ~ /^[0-9.]+$/ && y ~ /^[0-9.]+$/ && y > 0) ? sprintf("%.2f", x / y) : "-") }'; }

printf '  %-4s %8s %8s %8s %8s %8s %8s\n' rep plain50 pre50 plain99 pre99 p50x p99x
r=1 met=0 worst=0
while [ $r -le "$reps" ]; do
	k=1
	while [ $k -le "$chunks" ]; do
		if [ $(((r + k) % 2)) = 0 ]; then
			run plain.$r.$k; run preload.$r.$k $pre
		else
			run preload.$r.$k $pre; run plain.$r.$k
		fi
		k=$((k + 1))
	done
	set -- $(stats "$dir"/plain.$r.*) $(stats "$dir"/preload.$r.*)
	x50=$(ratio "$5" "$1") x99=$(ratio "$6" "$2")
	printf '  %-4s %8s %8s %8s %8s %8s %8s\n' "$r" "$1" "$5" "$2" "$6" "$x50" "$x99"
	met=$(awk -v x="$x99" -v t="$target" -v m="$met" 'BEGIN { print m + (x != "-" && x + 0 <= t + 0) }')
	worst=$(awk -v x="$x99" -v w="$worst" 'BEGIN { print ((x != "-" && x + 0 > w + 0) ? x : w) }')
	r=$((r + 1))
done
[ -z "${BENCH_KEEP:-}" ] || cp "$dir"/plain.* "$dir"/preload.* "$BENCH_KEEP/"
set -- $(stats "$dir"/plain.*) $(stats "$dir"/preload.*)
printf '  %-4s %8s %8s %8s %8s %8s %8s  (max %s vs %s)\n' all "$1" "$5" "$2" "$6" "$(ratio "$5" "$1")" \
	"$(ratio "$6" "$2")" "$3" "$7"
verdict=MISSED; [ "$met" != "$reps" ] || verdict=met
echo "  worst repetition p99 ${worst}x; target p99 preload/plain <= ${target}x: $verdict in $met of $reps"
