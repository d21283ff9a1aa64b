#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The dependency rule of the tree (README, "Architecture"), as TAP:
#   include/clockd <- src/shared <- src/libclockd and src/clockd <- src/clockctl
#   - the daemon never links or includes the client library;
#   - clockctl includes only the public headers and its own (checked by
#     tests/clockctl/api.sh);
#   - the time page has one writer: no file of the daemon but pagefile.c
#     touches the mapped page (pf->pg), so the alarm word, the flags, the
#     header, the latch and the device table are written there alone;
#   - src/shared and the library never include the daemon's headers.
src=${top_srcdir:-.}
build=${top_builddir:-.}
. "$src/tests/tap.sh"

# Lines of files matching an extended regex; empty when none.
hits() { # hits REGEX FILE...
	grep -nE "$1" "$@" 2>/dev/null || true
}

# 1. The daemon and the client library.
out=$(hits '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"](clockd/clockd\.h|libclockd/)' \
	"$src"/src/clockd/*.c "$src"/src/clockd/*.h)
[ -z "$out" ]; ok $? "src/clockd includes neither <clockd/clockd.h> nor src/libclockd headers" "$out"

out=$(hits 'libclockd(-preload)?\.la' "$src"/src/clockd/local.mk)
[ -z "$out" ]; ok $? "src/clockd/local.mk links no libclockd" "$out"

bin=$build/src/clockd/clockd
if [ -x "$bin" ] && command -v nm >/dev/null 2>&1; then
	# Defined or undefined, no symbol of the client API may be in it.
	out=$(nm "$bin" 2>/dev/null | grep -E ' (clockd_clock_gettime|clockd_get_jiffies_64|clockd_set_fallback|clockd_status)$' || true)
	[ -z "$out" ]; ok $? "the built clockd has no libclockd symbol" "$out"
	out=$(readelf -d "$bin" 2>/dev/null | grep -E 'NEEDED.*libclockd' || true)
	[ -z "$out" ]; ok $? "the built clockd needs no libclockd.so" "$out"
else
	skip "no built clockd or no nm"
	skip "no built clockd or no nm"
fi

# 2. clockctl: the public API only -- tests/clockctl/api.sh.

# 3. One writer of the page.
out=$(hits '(->|\.)pg\b' $(ls "$src"/src/clockd/*.c "$src"/src/clockd/*/*.c 2>/dev/null | grep -v '/pagefile\.c$'))
[ -z "$out" ]; ok $? "no file of the daemon but pagefile.c touches the mapped page" "$out"

out=$(hits '\b(latch_write_begin|latch_publish(_tagged)?|latch_store_data|latch_store_words|seqcount_write_(begin|end))\(' \
	$(ls "$src"/src/clockd/*.c "$src"/src/clockd/*/*.c "$src"/src/libclockd/*.c "$src"/src/clockctl/*.c 2>/dev/null |
	  grep -v '/pagefile\.c$'))
[ -z "$out" ]; ok $? "the latch and sequence-count writers are called from pagefile.c only" "$out"

out=$(hits '(->|\.)(alarm|dev_seq|ndevices)\b' \
	$(ls "$src"/src/clockd/*.c "$src"/src/clockd/*/*.c 2>/dev/null | grep -v '/pagefile\.c$'))
[ -z "$out" ]; ok $? "the alarm word and the device table are accessed in pagefile.c only" "$out"

# 3b. No two files of the daemon call each other, directly or round a
# longer loop (a loop is one module split in two, or a missing interface):
# the call graph between the objects of the daemon's convenience library.
lib=$build/src/clockd/.libs/libclockd-daemon.a
if [ -f "$lib" ] && command -v nm >/dev/null 2>&1; then
	out=$(nm -A "$lib" 2>/dev/null | awk -F: '
		{ n = split($3, f, " "); sym = f[n]; kind = f[n - 1]; m = $2 }
		kind ~ /^[TDBR]$/ { def[sym] = m }
		kind == "U" { use[m, sym] = 1; objs[m] = 1 }
		function reach(from, to, seen,   k, parts) {
			if (from == to) return 1
			if (from in seen) return 0
			seen[from] = 1
			for (k in edge) {
				split(k, parts, SUBSEP)
				if (parts[1] == from && reach(parts[2], to, seen)) return 1
			}
			return 0
		}
		END {
			for (k in use) {
				split(k, p, SUBSEP)
				if ((p[2] in def) && def[p[2]] != p[1]) edge[p[1], def[p[2]]] = 1
			}
			for (k in edge) {
				split(k, p, SUBSEP)
				delete seen
				if (reach(p[2], p[1], seen)) print p[1] " -> " p[2] " -> ... -> " p[1]
			}
		}')
	[ -z "$out" ]; ok $? "no call loop between the daemon's files" "$out"
else
	skip "no built libclockd-daemon.a or no nm"
fi

# 4. Lower layers never reach up.
out=$(hits '^[[:space:]]*#[[:space:]]*include[[:space:]]*"(clockd|libclockd|clockctl)/' \
	"$src"/src/shared/*.c "$src"/src/shared/*.h)
[ -z "$out" ]; ok $? "src/shared includes no daemon, library or clockctl header" "$out"

out=$(hits '^[[:space:]]*#[[:space:]]*include[[:space:]]*"(clockd|clockctl)/' \
	"$src"/src/libclockd/*.c "$src"/src/libclockd/*.h)
[ -z "$out" ]; ok $? "src/libclockd includes no daemon or clockctl header" "$out"

finish
