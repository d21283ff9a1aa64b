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
#   - src/shared and the library never include the daemon's headers;
#   - no two files of the daemon, of the library (libclockd-core) or of
#     src/shared call each other, directly or round a loop.
#   - a timer record's ring words are read and written by
#     src/shared/timerrec.c alone: everyone else goes through its codec.
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

# 3b. No two files of a layer call each other, directly or round a
# longer loop (a loop is one module split in two, or a missing interface):
# the call graph between the objects of a convenience library, by nm.
# loops ARCHIVE prints one line per object on a loop, nothing if none.
loops() {
	nm -A "$1" 2>/dev/null | awk -F: '
		{ n = split($3, f, " "); sym = f[n]; kind = f[n - 1]; m = $2 }
		kind ~ /^[TDBRVW]$/ { def[sym] = m }
		kind == "U" { use[m, sym] = 1 }
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
		}'
}

# The check is real: a loop planted between two objects is found.
cc=${CC:-cc}
ar=${AR:-ar}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if command -v nm >/dev/null 2>&1 && command -v "$ar" >/dev/null 2>&1 &&
	printf 'int b(int);\nint a(int x) { return x ? b(x - 1) : 0; }\n' >"$tmp/a.c" &&
	printf 'int c(int);\nint b(int x) { return c(x); }\n' >"$tmp/b.c" &&
	printf 'int a(int);\nint c(int x) { return a(x); }\nint d(void) { return 1; }\n' >"$tmp/c.c" &&
	printf 'int d(void);\nint e(void) { return d(); }\n' >"$tmp/e.c" &&
	(cd "$tmp" && $cc -c a.c b.c c.c e.c && "$ar" rc planted.a a.o b.o c.o e.o) >/dev/null 2>&1; then
	out=$(loops "$tmp/planted.a")
	echo "$out" | grep -q '^a\.o -> b\.o' && ! echo "$out" | grep -q '^e\.o'
	ok $? "the loop check finds a planted loop a.o -> b.o -> c.o -> a.o, and no other" "$out"
else
	skip "no C compiler, ar or nm to plant a loop with"
fi

for lib in src/clockd/.libs/libclockd-daemon.a:"the daemon's files" \
	src/libclockd/.libs/libclockd-core.a:"the client library's files (libclockd-core)" \
	src/shared/.libs/libshared.a:"the files of src/shared"; do
	a=$build/${lib%%:*}
	if [ -f "$a" ] && command -v nm >/dev/null 2>&1; then
		out=$(loops "$a")
		[ -z "$out" ]; ok $? "no call loop between ${lib#*:}" "$out"
	else
		skip "no built ${lib%%:*} or no nm"
	fi
done

# 4. Lower layers never reach up.
out=$(hits '^[[:space:]]*#[[:space:]]*include[[:space:]]*"(clockd|libclockd|clockctl)/' \
	"$src"/src/shared/*.c "$src"/src/shared/*.h)
[ -z "$out" ]; ok $? "src/shared includes no daemon, library or clockctl header" "$out"

out=$(hits '^[[:space:]]*#[[:space:]]*include[[:space:]]*"(clockd|clockctl)/' \
	"$src"/src/libclockd/*.c "$src"/src/libclockd/*.h)
[ -z "$out" ]; ok $? "src/libclockd includes no daemon or clockctl header" "$out"

# 5. Wire formats only through their codecs: the words of a timer record
# (struct ring_rec, shared/timerrec.h) are packed and unpacked in
# src/shared/timerrec.c alone. ring_words FILE... prints the lines of
# other files that index a record's words.
ring_words() {
	for f in "$@"; do
		case $f in */src/shared/timerrec.c) continue ;; esac
		grep -nHE '(->|\.)word[[:space:]]*\[' "$f" || true
	done
}

printf 'void f(struct ring_rec *r) { timerrec_void(r); }\n' >"$tmp/clean.c"
printf 'void f(struct ring_rec *r) {\n\tr->word[0] = 0;\n}\n' >"$tmp/planted.c"
out=$(ring_words "$tmp/clean.c" "$tmp/planted.c")
[ "$out" = "$tmp/planted.c:2:	r->word[0] = 0;" ]
ok $? "the ring-word check finds a planted r->word[0] and nothing in a clean file" "$out"

out=$(ring_words $(ls "$src"/src/*/*.[ch] "$src"/src/*/*/*.[ch] 2>/dev/null))
[ -z "$out" ]; ok $? "no file but src/shared/timerrec.c touches a timer record's ring words" "$out"

finish
