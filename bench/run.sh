#!/bin/sh
# Run the benchmarks against a private daemon: the read path (ns per call,
# ratios to the kernel's vDSO) and the daemon's idle CPU use at HZ=1000.
set -eu
builddir=${1:?usage: run.sh BUILDDIR}
dir=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$dir"; }
trap cleanup EXIT INT TERM

"$builddir/src/clockd/clockd" -o page="$dir/page" -o hz=1000 2>"$dir/clockd.log" &
pid=$!
export CLOCKD_SHM="$dir/page"
i=0
until "$builddir/bench/bench-read" >/dev/null 2>&1 </dev/null && [ -s "$dir/page" ]; do
	i=$((i + 1)); [ $i -lt 100 ] || { cat "$dir/clockd.log"; echo "bench: daemon did not come up"; exit 1; }
	sleep 0.1
done

echo "== read path (libclockd vs kernel vDSO), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
"$builddir/bench/bench-read"

# Idle CPU: the daemon's utime+stime over a span of wall time, measured
# alongside a calibration of the same span (clock ticks per second).
echo "== daemon idle CPU at HZ=1000 (no clients)"
tck=$(getconf CLK_TCK)
cpu() { awk '{ print $14 + $15 }' "/proc/$pid/stat"; }
c0=$(cpu); t0=$(date +%s.%N)
sleep 10
c1=$(cpu); t1=$(date +%s.%N)
awk -v c0="$c0" -v c1="$c1" -v t0="$t0" -v t1="$t1" -v hz="$tck" 'BEGIN {
	pct = (c1 - c0) / hz / (t1 - t0) * 100
	printf "  %.2f%% of one core over %.1f s (target <= 1%%: %s)\n", pct, t1 - t0, pct <= 1 ? "met" : "MISSED" }'
