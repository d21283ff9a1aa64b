#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The two-thread ring stress under ThreadSanitizer (1e6 records: TSan is
# slow). The build (tests/ring/local.mk) leaves stress-tsan.skip instead of
# the program when the compiler cannot link TSan programs.
: "${top_builddir:?}"
prog=$top_builddir/tests/ring/stress-tsan
if [ -f "$prog.skip" ]; then
	echo "1..0 # SKIP $(cat "$prog.skip")"
	exit 0
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/clockd-ring-tsan.XXXXXX") || { echo "Bail out! mktemp"; exit 99; }
trap 'rm -rf "$tmp"' EXIT

echo 1..2
TSAN_OPTIONS="halt_on_error=1 exitcode=66" RING_STRESS_RECORDS=${TSAN_RING_RECORDS:-1000000} \
	"$prog" threads >"$tmp/out" 2>"$tmp/err"
rc=$?
sed 's/^/# /' "$tmp/out" "$tmp/err"
if [ $rc -eq 0 ] && ! grep -q '^not ok' "$tmp/out" && grep -q '^1\.\.' "$tmp/out"; then
	echo "ok 1 - ring stress (threads) under TSan: every check passed"
else
	echo "not ok 1 - ring stress (threads) under TSan: exit status $rc or a failed check"
fi
if [ $rc -ne 66 ] && ! grep -q 'WARNING: ThreadSanitizer' "$tmp/err"; then
	echo "ok 2 - TSan reported no data race (exit status $rc)"
else
	echo "not ok 2 - TSan reported a data race (exit status $rc)"
fi
