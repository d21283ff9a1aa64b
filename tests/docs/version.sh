#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# One version source: AC_INIT's version (PACKAGE_VERSION in config.h) is
# what every place that names the release says:
#  - clockd --version, clockctl --version (text and --json), and through
#    it clockd_version() of the built library;
#  - libclockd.pc;
#  - the title line (.TH) of every built man page, and no man/*.in holds
#    a version of its own;
#  - NEWS's newest entry, and debian/changelog's newest entry when the
#    tree has debian/ (a checkout; the tarball does not ship it);
#  - the library's symbol nodes go no further than this release
#    (LIBCLOCKD_MAJOR.MINOR), each inherits the one before it, and the
#    soname is libclockd.so.1.
# TAP; $top_srcdir and $top_builddir come from the test harness.

set -u
: "${top_srcdir:?}" "${top_builddir:?}"

. "$top_srcdir/tests/tap.sh"
# same DESCRIPTION GOT: one test, passing when GOT is the version.
same() {
	if [ "$2" = "$v" ]; then pass "$1: $2"; else fail "$1: '$2', not '$v'"; fi
}

v=$(sed -n 's/^#define PACKAGE_VERSION "\(.*\)"$/\1/p' "$top_builddir/config.h")
if [ -z "$v" ]; then
	echo "Bail out! no PACKAGE_VERSION in $top_builddir/config.h"
	exit 99
fi
case $v in
[0-9]*.[0-9]*.[0-9]*) pass "AC_INIT's version is MAJOR.MINOR.PATCH: $v" ;;
*) fail "AC_INIT's version is MAJOR.MINOR.PATCH: $v" ;;
esac
mm=${v%.*}

# --- programs and library --------------------------------------------------
same "clockd --version" "$("$top_builddir/src/clockd/clockd" --version | sed -n '1s/^clockd //p')"
out=$("$top_builddir/src/clockctl/clockctl" --version)
same "clockctl --version (clockctl)" "$(echo "$out" | sed -n 's/^clockctl \([^ ]*\) (libclockd .*)$/\1/p')"
same "clockctl --version (clockd_version())" "$(echo "$out" | sed -n 's/^clockctl [^ ]* (libclockd \(.*\))$/\1/p')"
if command -v jq >/dev/null 2>&1; then
	out=$("$top_builddir/src/clockctl/clockctl" --json --version)
	same "clockctl --json --version (.clockctl)" "$(echo "$out" | jq -r .clockctl)"
	same "clockctl --json --version (.libclockd)" "$(echo "$out" | jq -r .libclockd)"
else
	skip "jq is not installed"
	skip "jq is not installed"
fi
same "libclockd.pc" "$(sed -n 's/^Version: //p' "$top_builddir/src/libclockd/libclockd.pc")"
if PKG_CONFIG_PATH=$top_builddir/src/libclockd pkg-config --exists libclockd 2>/dev/null; then
	same "pkg-config --modversion libclockd" \
		"$(PKG_CONFIG_PATH=$top_builddir/src/libclockd pkg-config --modversion libclockd)"
else
	skip "pkg-config cannot read libclockd.pc"
fi

# --- man pages --------------------------------------------------------------
pages=$(printf 'print-man:\n\t@echo $(man_MANS)\n' |
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$top_builddir" -f Makefile -f - print-man)
[ -n "$pages" ] && pass "the Makefile lists the man pages: $(echo $pages)" ||
	fail "the Makefile lists the man pages (man_MANS)"
for p in $pages; do
	if [ ! -f "$top_builddir/$p" ]; then
		fail "$p is built"
		continue
	fi
	same "$p's title line" "$(sed -n 's/^\.TH .*"clockd \([^"]*\)".*/\1/p' "$top_builddir/$p")"
done
fixed=$(grep -l '^\.TH .*"clockd [0-9]' "$top_srcdir"/man/*.in 2>/dev/null | sed 's|.*/||' | tr '\n' ' ')
[ -z "$fixed" ] && pass "no man/*.in has a version of its own in .TH" ||
	fail "no man/*.in has a version of its own in .TH (has: $fixed)"
left=$(grep -l '@[A-Za-z_]*@' "$top_builddir"/man/*.[1-8] 2>/dev/null | sed 's|.*/||' | tr '\n' ' ')
[ -z "$left" ] && pass "no built man page has an unsubstituted @variable@" ||
	fail "no built man page has an unsubstituted @variable@ (in: $left)"

# --- NEWS, debian/changelog ----------------------------------------------------
same "NEWS's newest entry" "$(sed -n 's/^\* clockd \([^ ]*\).*/\1/p' "$top_srcdir/NEWS" | head -n 1)"
if [ -f "$top_srcdir/debian/changelog" ]; then
	same "debian/changelog's newest entry (upstream part)" \
		"$(sed -n '1s/^clockd (\([^-)]*\)-[^)]*).*/\1/p' "$top_srcdir/debian/changelog")"
else
	skip "no debian/ in this tree"
fi

# --- symbol nodes -----------------------------------------------------------------
sym=$top_srcdir/src/libclockd/libclockd.sym
nodes=$(sed -n 's/^\(LIBCLOCKD_[0-9][0-9.]*\) {.*/\1/p' "$sym")
last=$(echo "$nodes" | tail -n 1)
newest=$(printf '%s\n' "$last" "LIBCLOCKD_$mm" | sort -V | tail -n 1)
[ "$newest" = "LIBCLOCKD_$mm" ] && pass "the newest symbol node $last is no later than LIBCLOCKD_$mm" ||
	fail "the newest symbol node $last is no later than LIBCLOCKD_$mm"
[ "$(echo "$nodes" | sort -V)" = "$nodes" ] && [ "$(echo "$nodes" | sort -u | wc -l)" -eq "$(echo "$nodes" | wc -l)" ] &&
	pass "the symbol nodes are in release order, each once: $(echo $nodes)" ||
	fail "the symbol nodes are in release order, each once: $(echo $nodes)"
bad=
prev=
for node in $nodes; do
	parent=$(sed -n "/^$node {/,/^}/s/^} *\([A-Z0-9_.]*\);.*/\1/p" "$sym")
	[ "$parent" = "$prev" ] || bad="$bad $node(${parent:-none})"
	prev=$node
done
[ -z "$bad" ] && pass "each symbol node inherits the one before it" ||
	fail "each symbol node inherits the one before it (not:$bad)"
so=$(ls "$top_builddir"/src/libclockd/.libs/libclockd.so.* 2>/dev/null | head -n 1)
if [ -n "$so" ] && command -v objdump >/dev/null 2>&1; then
	soname=$(objdump -p "$so" | sed -n 's/^ *SONAME *//p')
	[ "$soname" = libclockd.so.1 ] && pass "the soname is libclockd.so.1" ||
		fail "the soname is libclockd.so.1 (is: $soname)"
else
	skip "no built libclockd.so.* or no objdump"
fi

finish
