#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# A 32-bit client reads the 64-bit daemon's page: the real daemon runs on a
# private page; page-reader, built natively and with -m32 from the same
# sources, checks every clockd clock and jiffies_64 against the kernel and
# prints the page fields that do not change; both must pass and print the
# same thing.
: "${top_builddir:?}"
bin=$top_builddir/tests/page
tmp=$(mktemp -d "${TMPDIR:-/tmp}/clockd-m32.XXXXXX") || { echo "Bail out! mktemp"; exit 99; }
daemon=
cleanup() {
	[ -n "$daemon" ] && kill "$daemon" 2>/dev/null && wait "$daemon" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

. "$top_srcdir/tests/tap.sh"

"$top_builddir/src/clockd/clockd" -o page="$tmp/page" 2>"$tmp/clockd.err" &
daemon=$!
CLOCKD_SHM=$tmp/page "$bin/page-reader" --wait 2>"$tmp/wait.err"
rc=$?
ok $rc "the daemon is live on $tmp/page"
if [ $rc -ne 0 ]; then
	diag_file "$tmp/wait.err" "$tmp/clockd.err"
	bail "no live daemon"
fi

CLOCKD_SHM=$tmp/page "$bin/page-reader" >"$tmp/out64" 2>"$tmp/err64"
rc=$?
grep -q '^page.magic 0x4b4c4343$' "$tmp/out64" || rc=1
ok $rc "64-bit reader: clocks within 1 s of the kernel, jiffies_64 plausible"
diag_file "$tmp/out64" "$tmp/err64"

if [ -f "$bin/page-reader-m32.skip" ]; then
	why=$(cat "$bin/page-reader-m32.skip")
	skip "32-bit reader" "$why"
	skip "32-bit and 64-bit readers agree" "$why"
	finish
fi
if [ ! -x "$bin/page-reader-m32" ]; then
	# Our own make rule kept the compiler's complaint: the library
	# sources do not build for a 32-bit target.
	diag_file "$bin/page-reader-m32.err"
	ok 1 "32-bit reader: libclockd builds with -m32"
	skip "32-bit and 64-bit readers agree" "no 32-bit reader"
	finish
fi
# The reader is static, so an i386 user-mode emulator can run it where the
# kernel has no IA-32 emulation (qemu-i386 reads the host's TSC for rdtsc
# and maps the page MAP_SHARED like any process).
run32=
CLOCKD_SHM=$tmp/page "$bin/page-reader-m32" >"$tmp/out32" 2>"$tmp/err32"
rc=$?
if [ $rc -eq 126 ] && [ ! -s "$tmp/out32" ]; then
	# The shell found it but execve said ENOEXEC: no IA-32 emulation.
	if ! command -v qemu-i386 >/dev/null 2>&1; then
		diag_file "$tmp/err32"
		skip "32-bit reader" "this kernel cannot run 32-bit programs and qemu-i386 (Debian: qemu-user) is absent"
		skip "32-bit and 64-bit readers agree" "no way to run a 32-bit program here"
		exit 0
	fi
	run32="qemu-i386 "
	CLOCKD_SHM=$tmp/page qemu-i386 "$bin/page-reader-m32" >"$tmp/out32" 2>"$tmp/err32"
	rc=$?
fi
ok $rc "32-bit reader (${run32:-native}): clocks within 1 s of the kernel, jiffies_64 plausible"
diag_file "$tmp/err32"
diff "$tmp/out64" "$tmp/out32" >"$tmp/diff"
rc=$?
ok $rc "32-bit and 64-bit readers print the same page fields ($(wc -l <"$tmp/out64") lines)"
diag_file "$tmp/diff"
finish
