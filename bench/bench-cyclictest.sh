#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# cyclictest (Debian's rt-tests) plainly and under libclockd-preload.so,
# same options, one after the other, against a private daemon (HZ=1000,
# its default clocksource): the wake-up latency histograms' p50, p99 and
# max side by side, and their ratios (preload / plain). Under the library
# cyclictest's clock_gettime and clock_nanosleep(CLOCK_MONOTONIC,
# TIMER_ABSTIME) are clockd's: it sleeps on the kernel's clock to a little
# short of the wake-up and spins the last 50 us on clockd's.
#
#   bench-cyclictest.sh BUILDDIR
#   CYCLICTEST_OPTS  the options (default below); -h US is needed
set -eu
builddir=${1:?usage: bench-cyclictest.sh BUILDDIR}
opts=${CYCLICTEST_OPTS:--m -q -l 5000 -i 1000 -h 10000 -t 1 -a 0}
lib=$builddir/src/libclockd/.libs/libclockd-preload.so

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
echo "  cyclictest $opts; clockd CLOCKD_MONOTONIC resolution $res"

# run NAME [VAR=VALUE]...: cyclictest into $dir/NAME, its CPU seconds
# (user + system, from the children's times) into $dir/NAME.cpu
run() {
	name=$1; shift
	t0=$(awk '{ print $14 + $15 + $16 + $17 }' /proc/$$/stat)
	# shellcheck disable=SC2086
	env "$@" cyclictest $opts >"$dir/$name" 2>"$dir/$name.err" || { cat "$dir/$name.err" >&2; exit 1; }
	t1=$(awk '{ print $14 + $15 + $16 + $17 }' /proc/$$/stat)
	awk -v t="$((t1 - t0))" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.2f\n", t / hz }' >"$dir/$name.cpu"
}
run plain
run preload LD_PRELOAD="$lib" CLOCKD_PRELOAD=refuse
[ -z "${BENCH_KEEP:-}" ] || cp "$dir/plain" "$dir/preload" "$BENCH_KEEP/"

# stats FILE: "p50 p99 max count" in us from a cyclictest -h histogram
# (bucket count lines; overflows past the last bucket count as beyond it).
stats() {
	awk 'BEGIN { n = 0 } /^[0-9]+ +[0-9]+$/ { b[n] = $1 + 0; c[n] = $2 + 0; total += $2; n++ }
	     /^# Histogram Overflows:/ { over = $4 + 0; total += over }
	     /^# Max Latencies:/ { max = $4 + 0 }
	     END {
		p50 = p99 = -1; cum = 0
		for (i = 0; i < n; i++) {
			cum += c[i]
			if (p50 < 0 && cum >= 0.50 * total) p50 = b[i]
			if (p99 < 0 && cum >= 0.99 * total) p99 = b[i]
		}
		if (p50 < 0) p50 = ">" b[n - 1]
		if (p99 < 0) p99 = ">" b[n - 1]
		print p50, p99, max, total }' "$1"
}
set -- $(stats "$dir/plain") $(cat "$dir/plain.cpu") $(stats "$dir/preload") $(cat "$dir/preload.cpu")
awk -v a50="$1" -v a99="$2" -v amax="$3" -v an="$4" -v acpu="$5" \
    -v b50="$6" -v b99="$7" -v bmax="$8" -v bn="$9" -v bcpu="${10}" 'BEGIN {
	printf "  %-22s %8s %8s %8s %8s %8s\n", "latency (us)", "p50", "p99", "max", "samples", "CPU s"
	printf "  %-22s %8s %8s %8s %8s %8.2f\n", "plain (kernel clock)", a50, a99, amax, an, acpu
	printf "  %-22s %8s %8s %8s %8s %8.2f\n", "libclockd-preload", b50, b99, bmax, bn, bcpu
	printf "  %-22s %8s %8s %8s %8s %8s\n", "ratio preload/plain", ratio(b50, a50), ratio(b99, a99), \
		ratio(bmax, amax), "", ratio(bcpu, acpu) }
	function ratio(x, y) { return x ~ /^[0-9.]+$/ && y ~ /^[0-9.]+$/ && y > 0 ? sprintf("%.2f", x / y) : "-" }'
