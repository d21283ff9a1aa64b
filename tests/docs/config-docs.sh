#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The documentation against the code. The code is the reference: the key
# list, defaults and ranges come from the built daemon (--help-config,
# printed from config_table[]), the options from --help, the exported
# symbols from libclockd.sym and the macros from <clockd/clockd.h>.
#  - man/clockd.conf.5 documents every key (a ".TP" / ".B key" entry of
#    KEYS whose first line gives the type, range or choices and default)
#    and no other;
#  - conf/clockd.conf carries every key as "#key = default", and no other;
#    it is valid as shipped and with every key uncommented, and then it
#    gives exactly the defaults;
#  - man/clockd.8 documents every option of --help, and no other;
#  - man/libclockd.3 documents every exported symbol and public macro;
#    its example compiles warning-free and behaves as the page says;
#  - every man page renders without a warning.
# TAP; $top_srcdir and $top_builddir come from the test harness.

set -u
: "${top_srcdir:?}" "${top_builddir:?}"

clockd=$top_builddir/src/clockd/clockd
conf5=$top_builddir/man/clockd.conf.5
man8=$top_builddir/man/clockd.8
man3=$top_builddir/man/libclockd.3
shipped=$top_srcdir/conf/clockd.conf
sym=$top_srcdir/src/libclockd/libclockd.sym
header=$top_srcdir/include/clockd/clockd.h

. "$top_srcdir/tests/tap.sh"
# check DESCRIPTION COMMAND...: one test, passing when COMMAND succeeds.
check() {
	what=$1
	shift
	if "$@"; then pass "$what"; else fail "$what"; fi
}

if [ ! -x "$clockd" ]; then
	echo "Bail out! $clockd is not built"
	exit 99
fi

tmp=$(mktemp -d) || exit 99
daemon_pid=
cleanup() {
	if [ -n "$daemon_pid" ]; then
		kill "$daemon_pid" 2>/dev/null
		wait "$daemon_pid" 2>/dev/null
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM

# --- The reference: the config table, as the daemon prints it. -------------
# "name default DEF range MIN..MAX" | "... one of A B C" | "... absolute path",
# then an indented description line. We turn each key into the line its
# entry in clockd.conf(5) must start with.
"$clockd" --help-config >"$tmp/help-config" || { echo "Bail out! clockd --help-config failed"; exit 99; }
awk '
/^[^ ]/ {
	key = $1; def = $3
	if ($4 == "range") {
		split($5, r, /\.\./)
		line = "Integer from " r[1] " to " r[2] "; default " def "."
	} else if ($4 == "one") {
		line = "One of " $6
		for (i = 7; i <= NF; i++)
			line = line ", " $i
		line = line "; default " def "."
	} else if ($4 == "list") {
		line = "List of " $6
		for (i = 7; i <= NF; i++)
			line = line ", " $i
		line = line "; default " def "."
	} else if ($4 == "text") {
		line = "Text; default " def "."
	} else if ($4 == "absolute") {
		line = "Absolute path; default " def "."
	} else {
		line = "UNKNOWN TYPE"
	}
	print key "\t" def "\t" line
}' "$tmp/help-config" >"$tmp/table"
nkeys=$(wc -l <"$tmp/table")
if [ "$nkeys" -lt 1 ] || grep -q 'UNKNOWN TYPE' "$tmp/table"; then
	echo "Bail out! cannot parse clockd --help-config"
	exit 99
fi
cut -f1 "$tmp/table" | sort >"$tmp/keys"

# --- clockd.conf(5) ----------------------------------------------------------
# The top-level ".TP" entries of section KEYS (nested lists, inside .RS/.RE,
# describe choices and are not keys): "key<TAB>first line".
awk '
/^\.SH/ { inkeys = ($0 ~ /^\.SH +"?KEYS"?$/); depth = 0; next }
!inkeys { next }
/^\.RS/ { depth++; next }
/^\.RE/ { depth--; next }
state == 2 { print key "\t" $0; state = 0; next }
state == 1 {
	if ($0 ~ /^\.B [a-z0-9_]+$/) { key = $2; state = 2 } else state = 0
	next
}
/^\.TP/ && depth == 0 { state = 1 }
' "$conf5" >"$tmp/man-entries"
cut -f1 "$tmp/man-entries" | sort >"$tmp/man-keys"

while IFS='	' read -r key def line; do
	count=$(awk -F '\t' -v k="$key" '$1 == k' "$tmp/man-entries" | wc -l)
	got=$(awk -F '\t' -v k="$key" '$1 == k { print $2; exit }' "$tmp/man-entries")
	if [ "$count" -eq 1 ] && [ "$got" = "$line" ]; then
		pass "clockd.conf.5 documents $key: $line"
	else
		fail "clockd.conf.5 documents $key once, starting \"$line\""
		echo "found $count entries; first line: \"$got\"" | diag_file
	fi
done <"$tmp/table"
extra=$(comm -13 "$tmp/keys" "$tmp/man-keys" | tr '\n' ' ')
check "clockd.conf.5 documents no key the table lacks${extra:+ (has: $extra)}" \
	test -z "$extra"

# --- conf/clockd.conf --------------------------------------------------------
while IFS='	' read -r key def line; do
	count=$(grep -c -x -F "#$key = $def" "$shipped")
	check "conf/clockd.conf has \"#$key = $def\" once" test "$count" -eq 1
done <"$tmp/table"
sed -n 's/^#\{0,1\}[ 	]*\([a-z0-9_][a-z0-9_]*\)[ 	]*=.*/\1/p' "$shipped" | sort -u >"$tmp/conf-keys"
extra=$(comm -13 "$tmp/keys" "$tmp/conf-keys" | tr '\n' ' ')
check "conf/clockd.conf sets no key the table lacks${extra:+ (has: $extra)}" \
	test -z "$extra"
check "conf/clockd.conf leaves every key commented out" \
	sh -c '! grep -q "^[ 	]*[a-z0-9_]" "$1"' sh "$shipped"

"$clockd" --check-config -c /dev/null >"$tmp/defaults" 2>"$tmp/err"
check "clockd --check-config accepts an empty file" test $? -eq 0 -a -s "$tmp/defaults"
"$clockd" --check-config -c "$shipped" >"$tmp/as-shipped" 2>"$tmp/err"
if [ $? -eq 0 ] && cmp -s "$tmp/defaults" "$tmp/as-shipped"; then
	pass "conf/clockd.conf as shipped is valid and gives the defaults"
else
	fail "conf/clockd.conf as shipped is valid and gives the defaults"
	diag_file <"$tmp/err"
fi
sed 's/^#\([a-z0-9_][a-z0-9_]* *=\)/\1/' "$shipped" >"$tmp/uncommented.conf"
set_lines=$(grep -c '^[a-z0-9_]' "$tmp/uncommented.conf")
check "uncommenting conf/clockd.conf sets all $nkeys keys" test "$set_lines" -eq "$nkeys"
"$clockd" --check-config -c "$tmp/uncommented.conf" >"$tmp/uncommented" 2>"$tmp/err"
if [ $? -eq 0 ] && cmp -s "$tmp/defaults" "$tmp/uncommented"; then
	pass "conf/clockd.conf uncommented passes --check-config and gives the defaults"
else
	fail "conf/clockd.conf uncommented passes --check-config and gives the defaults"
	diag_file <"$tmp/err"
	diff "$tmp/defaults" "$tmp/uncommented" | diag_file
fi

# --- clockd.8: the options ---------------------------------------------------
# --help lines "  -c, --config FILE  ..." or "      --check-config  ...":
# "long<TAB>short" (short empty when there is none).
"$clockd" --help >"$tmp/help" || { echo "Bail out! clockd --help failed"; exit 99; }
sed -n 's/^ *\(-\([A-Za-z]\), \)\{0,1\}--\([a-z][a-z-]*\).*/\3	\2/p' "$tmp/help" >"$tmp/options"
if [ ! -s "$tmp/options" ]; then
	echo "Bail out! cannot parse clockd --help"
	exit 99
fi
# The tag lines of the OPTIONS section's entries, roff escapes removed.
awk '
/^\.SH/ { inopt = ($0 ~ /^\.SH +"?OPTIONS"?$/); next }
inopt && tag { print; tag = 0; next }
inopt && /^\.TP/ { tag = 1 }
' "$man8" | sed 's/\\-/-/g' >"$tmp/man-tags"
while IFS='	' read -r long short; do
	if grep -q -e "--$long\([^a-z-]\|\$\)" "$tmp/man-tags" &&
		{ [ -z "$short" ] || grep -e "--$long\([^a-z-]\|\$\)" "$tmp/man-tags" | grep -q -e "-$short\([^a-zA-Z-]\|\$\)"; }; then
		pass "clockd.8 documents --$long${short:+ (-$short)}"
	else
		fail "clockd.8 documents --$long${short:+ (-$short)} under OPTIONS"
	fi
done <"$tmp/options"
cut -f1 "$tmp/options" | sort >"$tmp/long-options"
grep -o -e '--[a-z][a-z-]*' "$tmp/man-tags" | sed 's/^--//' | sort -u >"$tmp/man-options"
extra=$(comm -13 "$tmp/long-options" "$tmp/man-options" | tr '\n' ' ')
check "clockd.8 documents no option clockd lacks${extra:+ (has: $extra)}" test -z "$extra"

# --- libclockd.3: symbols and macros ------------------------------------------
awk '/^[ \t]*global:/ { on = 1; next } /^[ \t]*local:/ || /^[ \t]*}/ { on = 0 }
	on { gsub(/[ \t;]/, ""); if ($0 != "") print }' "$sym" | sort >"$tmp/symbols"
if [ ! -s "$tmp/symbols" ]; then
	echo "Bail out! no symbols in $sym"
	exit 99
fi
awk '/^\.SH/ { syn = ($0 ~ /^\.SH +"?SYNOPSIS"?$/) } syn' "$man3" >"$tmp/man3-synopsis"
awk '/^\.SH/ { syn = ($0 ~ /^\.SH +"?SYNOPSIS"?$/) } !syn' "$man3" >"$tmp/man3-body"
while read -r s; do
	if grep -q "[ *]$s(" "$tmp/man3-synopsis" && grep -q -w "$s" "$tmp/man3-body"; then
		pass "libclockd.3 declares and describes $s"
	else
		fail "libclockd.3 declares $s in SYNOPSIS and describes it"
	fi
done <"$tmp/symbols"
# Inline functions, macros and enum constants of the public header.
{
	sed -n 's/^static inline [a-z0-9_ ]*[ *]\(clockd_[a-z0-9_]*\)(.*/\1/p' "$header"
	sed -n 's/^#define \(CLOCKD_[A-Z0-9_]*\).*/\1/p' "$header" | grep -v '_H$'
	sed -n 's/^[ 	]*\(CLOCKD_STATE_[A-Z_]*\) *=.*/\1/p' "$header"
} | sort -u >"$tmp/header-names"
missing=$(while read -r m; do grep -q -w "$m" "$man3" || printf '%s ' "$m"; done <"$tmp/header-names")
check "libclockd.3 mentions every inline function, macro and state of clockd.h${missing:+ (lacks: $missing)}" \
	test -z "$missing"
sed -n 's/.*[ *]\(clockd_[a-z0-9_]*\)(.*/\1/p' "$tmp/man3-synopsis" | sort -u >"$tmp/man3-functions"
extra=$(comm -23 "$tmp/man3-functions" "$tmp/symbols" |
	while read -r f; do grep -q "^static inline .*[ *]$f(" "$header" || printf '%s ' "$f"; done)
check "libclockd.3 declares no function the library lacks${extra:+ (has: $extra)}" test -z "$extra"

# --- Section 3: one page per function group ------------------------------------
# Every exported function, and every static inline function of the public
# header, is named in the NAME section of exactly one page of man/ (make
# install gives it a ".so" page of its own name pointing there:
# man/names.sh), and such a page names no other function; it may name
# itself (libclockd).
sed -n 's/^static inline [a-z0-9_ ]*[ *]\(clockd_[a-z0-9_]*\)(.*/\1/p' "$header" | sort -u >"$tmp/inlines"
if [ ! -s "$tmp/inlines" ]; then
	echo "Bail out! no static inline functions found in $header"
	exit 99
fi
sort -u "$tmp/symbols" "$tmp/inlines" >"$tmp/functions"
sh "$top_srcdir/man/names.sh" "$top_builddir"/man/*.3 | sort >"$tmp/named"
for p in "$top_builddir"/man/*.3; do b=${p##*/}; echo "${b%.3}"; done | sort >"$tmp/pages"
unnamed=$(comm -23 "$tmp/functions" "$tmp/named" | tr '\n' ' ')
check "every exported and inline function is named by a section-3 page${unnamed:+ (not: $unnamed)}" test -z "$unnamed"
twice=$(uniq -d "$tmp/named" | tr '\n' ' ')
check "no function is named by two section-3 pages${twice:+ (twice: $twice)}" test -z "$twice"
extra=$(sort -u "$tmp/named" | comm -13 "$tmp/functions" - | comm -23 - "$tmp/pages" | tr '\n' ' ')
check "the section-3 pages name no function the library lacks${extra:+ (has: $extra)}" test -z "$extra"
# Every public type of the header (struct, union, enum, typedef) is shown
# in the SYNOPSIS of a section-3 page.
{
	sed -n 's/^\(struct\|union\|enum\) \(clockd_[a-z_]*\) {.*/\1 \2/p' "$header"
	sed -n 's/^typedef .*[ *]\([a-z_]*_t\);$/\1/p; s/^typedef void \([a-z_]*\)(.*/\1/p' "$header"
} | sort -u >"$tmp/types"
for p in "$top_builddir"/man/*.3; do
	awk '/^\.SH/ { syn = ($0 ~ /^\.SH +"?SYNOPSIS"?$/) } syn' "$p"
done >"$tmp/all-synopses"
untyped=$(while read -r ty; do
	grep -q -e "$ty {" -e "typedef .*[ *]$ty;" -e "typedef void $ty(" "$tmp/all-synopses" ||
		printf '%s, ' "$ty"
done <"$tmp/types")
check "every public type of clockd.h is defined in a section-3 SYNOPSIS${untyped:+ (not: ${untyped%, })}" \
	test -z "$untyped"

# --- libclockd.3: the example --------------------------------------------------
# Compiled with the project's compiler through libtool, linked to the built
# library, then run with no page (fails, exit 1), with the fallback
# (succeeds) and against a daemon (reads its HZ).
awk '/^\.SH/ { ex = ($0 ~ /^\.SH +"?EXAMPLES"?$/) }
	ex && /^\.EE/ { code = 0 } ex && code { print } ex && /^\.EX/ { code = 1 }' "$man3" |
	sed -e 's/\\e/\\/g' -e 's/\\-/-/g' -e 's/\\&//g' -e "s/\\\\(aq/'/g" >"$tmp/example.c"
cc=$(sed -n 's/^CC = //p' "$top_builddir/Makefile")
libtool="$top_builddir/libtool"
# The build's own CFLAGS/LDFLAGS (a sanitizer build's library needs a
# program linked with the same runtime).
build_cflags=$(sed -n 's/^CFLAGS = //p' "$top_builddir/Makefile")
build_ldflags=$(sed -n 's/^LDFLAGS = //p' "$top_builddir/Makefile")
example_built=no
if [ ! -s "$tmp/example.c" ]; then
	fail "libclockd.3 has an example program"
elif [ -z "$cc" ] || [ ! -x "$libtool" ]; then
	skip "no compiler or libtool recorded in $top_builddir"
elif (cd "$tmp" && "$libtool" --quiet --mode=link $cc $build_cflags -std=gnu11 -Wall -Wextra -Werror \
	-I"$top_srcdir/include" -o example example.c "$top_builddir/src/libclockd/libclockd.la" $build_ldflags) \
	>"$tmp/cc.log" 2>&1; then
	pass "the example of libclockd.3 compiles with -Wall -Wextra -Werror"
	example_built=yes
else
	fail "the example of libclockd.3 compiles with -Wall -Wextra -Werror"
	diag_file <"$tmp/cc.log"
fi
run_example() {
	"$libtool" --mode=execute "$tmp/example" >"$tmp/out" 2>"$tmp/err"
}
if [ $example_built = yes ]; then
	CLOCKD_SHM=$tmp/none CLOCKD_FALLBACK= run_example
	rc=$?
	if [ $rc -eq 1 ] && grep -q 'No such file' "$tmp/err"; then
		pass "the example reports ENOENT and exits 1 without a daemon"
	else
		fail "the example reports ENOENT and exits 1 without a daemon (exit $rc)"
		diag_file <"$tmp/err"
	fi
	CLOCKD_SHM=$tmp/none CLOCKD_FALLBACK=kernel run_example
	rc=$?
	if [ $rc -eq 0 ] && grep -q '^took [0-9]* ns$' "$tmp/out" && grep -q '^no jiffies' "$tmp/out"; then
		pass "with CLOCKD_FALLBACK=kernel the example times with the kernel clock"
	else
		fail "with CLOCKD_FALLBACK=kernel the example times with the kernel clock (exit $rc)"
		diag_file <"$tmp/out"
		diag_file <"$tmp/err"
	fi
	"$clockd" -o page="$tmp/page" -o hz=250 2>"$tmp/daemon.log" &
	daemon_pid=$!
	# Poll until the daemon publishes (at most ~10 s): no fixed sleep.
	tries=0
	until CLOCKD_SHM=$tmp/page CLOCKD_FALLBACK= run_example && grep -q '^jiffies_64' "$tmp/out"; do
		tries=$((tries + 1))
		if [ $tries -ge 100 ] || ! kill -0 "$daemon_pid" 2>/dev/null; then
			break
		fi
		sleep 0.1
	done
	if grep -q '^jiffies_64 [0-9]* at HZ 250$' "$tmp/out"; then
		pass "against a daemon at hz=250 the example prints its jiffies and HZ"
	else
		fail "against a daemon at hz=250 the example prints its jiffies and HZ"
		diag_file <"$tmp/out"
		diag_file <"$tmp/err"
		diag_file <"$tmp/daemon.log"
	fi
	kill "$daemon_pid" 2>/dev/null
	wait "$daemon_pid" 2>/dev/null
	daemon_pid=
else
	skip "the example was not built"
	skip "the example was not built"
	skip "the example was not built"
fi

# --- Rendering ---------------------------------------------------------------
# Every man page in man/, with warnings on; any message is a failure.
if command -v man >/dev/null 2>&1 && man --help 2>&1 | grep -q -e '--warnings'; then
	render() { LC_ALL=C.UTF-8 MANROFFSEQ= man --warnings -E UTF-8 -l "$1" >/dev/null; }
	tool=man
elif command -v groff >/dev/null 2>&1; then
	render() { groff -man -ww -z "$1"; }
	tool=groff
else
	tool=
fi
for page in "$top_builddir"/man/*.[1-8]; do
	name=${page##*/}
	if [ -z "$tool" ]; then
		skip "$name: neither man-db nor groff is installed"
		continue
	fi
	render "$page" >"$tmp/render" 2>&1
	rc=$?
	if [ $rc -eq 0 ] && [ ! -s "$tmp/render" ]; then
		pass "$name renders without warnings ($tool)"
	else
		fail "$name renders without warnings ($tool)"
		diag_file <"$tmp/render"
	fi
done

finish
