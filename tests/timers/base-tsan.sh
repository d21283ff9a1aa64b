#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# tests/timers/base under ThreadSanitizer: the base threads, the tick
# hand-off, the command queue and the statistics, with smaller runs (TSan
# is slow). The build (tests/timers/local.mk) leaves base-tsan.skip instead
# of the program when the compiler cannot link TSan programs.
: "${top_builddir:?}"
prog=$top_builddir/tests/timers/base-tsan
if [ -f "$prog.skip" ]; then
	echo "1..0 # SKIP $(cat "$prog.skip")"
	exit 0
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/clockd-tb-tsan.XXXXXX") || { echo "Bail out! mktemp"; exit 99; }
trap 'rm -rf "$tmp"' EXIT

echo 1..2
TSAN_OPTIONS="halt_on_error=1 exitcode=66" BASE_EXPIRIES=${TSAN_BASE_EXPIRIES:-50000} \
	BASE_MANY=${TSAN_BASE_MANY:-100000} "$prog" >"$tmp/out" 2>"$tmp/err"
rc=$?
sed 's/^/# /' "$tmp/out" "$tmp/err"
if [ $rc -eq 0 ] && ! grep -q '^not ok' "$tmp/out" && grep -q '^1\.\.' "$tmp/out"; then
	echo "ok 1 - timer bases under TSan: every check passed"
else
	echo "not ok 1 - timer bases under TSan: exit status $rc or a failed check"
fi
if [ $rc -ne 66 ] && ! grep -q 'WARNING: ThreadSanitizer' "$tmp/err"; then
	echo "ok 2 - TSan reported no data race (exit status $rc)"
else
	echo "not ok 2 - TSan reported a data race (exit status $rc)"
fi
