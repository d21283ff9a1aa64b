#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# tsan-run.sh WHAT PROGRAM [ARG]...: run PROGRAM, a TAP test built with
# -fsanitize=thread, with ARGs and the environment it was given (the
# wrappers set smaller runs: TSan is slow), and report two checks: every
# check of its own passed, and TSan reported no data race. The build
# leaves PROGRAM.skip instead of the program when the compiler cannot link
# TSan programs; then the test skips with that reason.
: "${top_builddir:?run from make check (top_builddir unset)}"
what=$1 prog=$2
shift 2
if [ -f "$prog.skip" ]; then
	echo "1..0 # SKIP $(cat "$prog.skip")"
	exit 0
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/clockd-tsan.XXXXXX") || { echo "Bail out! mktemp"; exit 99; }
trap 'rm -rf "$tmp"' EXIT

echo 1..2
TSAN_OPTIONS="halt_on_error=1 exitcode=66" "$prog" "$@" >"$tmp/out" 2>"$tmp/err"
rc=$?
sed 's/^/# /' "$tmp/out" "$tmp/err"
if [ $rc -eq 0 ] && ! grep -q '^not ok' "$tmp/out" && grep -q '^1\.\.' "$tmp/out"; then
	echo "ok 1 - $what under TSan: every check passed"
else
	echo "not ok 1 - $what under TSan: exit status $rc or a failed check"
fi
if [ $rc -ne 66 ] && ! grep -q 'WARNING: ThreadSanitizer' "$tmp/err"; then
	echo "ok 2 - TSan reported no data race (exit status $rc)"
else
	echo "not ok 2 - TSan reported a data race (exit status $rc)"
fi
