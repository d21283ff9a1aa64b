#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Build the libFuzzer harnesses (clang-14, ASan + UBSan), then run them
# side by side, each for a bounded time on a scratch copy of its seed
# corpus. Not part of make check (it needs clang-14 and takes minutes); CI
# runs it (build-aux/ci.sh).
#
#   tests/fuzz/run.sh [SECONDS [HARNESS...]]
#
# SECONDS of each harness, all at once (default 20: with the three on two
# CPUs, 13 s of a CPU each; FUZZ_RUNS=N runs N inputs instead, for a long
# run: FUZZ_RUNS=10000000 tests/fuzz/run.sh). HARNESS: ctlproto,
# config, page (default: all). Work files go to $FUZZ_OUT (default
# $TMPDIR/clockd-fuzz). Exits non-zero when a harness finds a
# crash, a sanitizer report, a leak or a timeout; the input that did it is
# left in $FUZZ_OUT as crash-*, leak-* or timeout-*.
set -eu
cd "$(dirname "$0")/../.."
top=$(pwd)
secs=${1:-20}
[ $# -gt 0 ] && shift
harnesses=${*:-ctlproto config page}
out=${FUZZ_OUT:-${TMPDIR:-/tmp}/clockd-fuzz}
CC=${FUZZ_CC:-clang-14}

if ! command -v "$CC" >/dev/null 2>&1; then
	echo "fuzz/run.sh: $CC not found (apt-get install clang-14)" >&2
	exit 77
fi
mkdir -p "$out"

flags="-g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
-D_GNU_SOURCE -DCLOCKD_NO_INLINE -DPACKAGE_VERSION=\"fuzz\" -DSYSCONFDIR=\"/etc\" -Iinclude -Isrc"
lib="src/libclockd/page.c src/libclockd/clock.c src/libclockd/status.c
src/libclockd/jiffies.c src/libclockd/vclock.c src/shared/latch.c src/shared/timens.c"

# sources HARNESS: what it is built from
sources() {
	case $1 in
	ctlproto) echo "tests/fuzz/ctlproto-fuzz.c src/shared/ctlproto.c" ;;
	config) echo "tests/fuzz/config-fuzz.c src/shared/config.c src/shared/simscript.c" ;;
	page) echo "tests/fuzz/page-fuzz.c $lib" ;;
	*) echo "fuzz/run.sh: unknown harness $1" >&2; exit 2 ;;
	esac
}

# Options per harness: inputs as big as a page and a little more for the
# page reader; a second is already a hang for any of them.
options() {
	case $1 in
	page) echo "-max_len=4200 -timeout=5" ;;
	config) echo "-max_len=2048 -timeout=5" ;;
	*) echo "-timeout=5" ;;
	esac
}

for h in $harnesses; do
	# shellcheck disable=SC2046,SC2086
	$CC $flags $(sources "$h") -o "$out/$h-fuzz" -lpthread
	rm -rf "$out/$h-corpus"
	mkdir -p "$out/$h-corpus"
done
if [ -n "${FUZZ_RUNS:-}" ]; then
	limit="-runs=$FUZZ_RUNS"
else
	limit="-max_total_time=$secs"
fi

# All at once, each in the background; their results in order after.
pids=
for h in $harnesses; do
	echo "== fuzz $h ($limit)"
	# shellcheck disable=SC2046
	(cd "$out" && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
		exec "./$h-fuzz" $(options "$h") "$limit" -print_final_stats=1 \
		"$h-corpus" "$top/tests/fuzz/$h-corpus" 2>"$h.log") &
	pids="$pids $!"
done
status=0
for h in $harnesses; do
	# shellcheck disable=SC2086 # process ids
	set -- $pids
	p=$1
	shift
	pids=$*
	if wait "$p"; then
		grep -E '^stat::number_of_executed_units|^Done' "$out/$h.log" | sed "s/^/$h: /"
	else
		tail -n 40 "$out/$h.log"
		echo "fuzz/run.sh: $h failed (log: $out/$h.log)" >&2
		status=1
	fi
done
exit $status
