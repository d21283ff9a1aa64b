#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Comments name only files that exist. Every name of a file (.c, .h,
# .sh, .mk, .sym, .md, .in, .am, .ac) in a comment of the tree's C and
# shell sources, Makefile fragments and configure.ac must be one of:
#  - a file of the tree (by its path, or a path ending in it);
#  - a header the C compiler finds (<sys/timex.h>, <stdnoreturn.h>);
#  - a file of another project named with where it lives: a path under
#    kernel/, drivers/, include/linux/ or arch/ (the Linux tree), or a name
#    listed in tests/docs/external-names with its project.
# A renamed or removed file leaves a comment pointing nowhere; this fails
# on it, naming the comment's file and line. With -t (self-test) it checks
# that a planted comment naming a missing file is caught.
# TAP; $top_srcdir comes from the test harness.
set -u
: "${top_srcdir:?}"
. "$top_srcdir/tests/tap.sh"
cd "$top_srcdir" || bail "cannot enter $top_srcdir"
T=$(mktemp -d "${TMPDIR:-/tmp}/clockd-comments.XXXXXX") || bail "mktemp failed"
trap 'rm -rf "$T"' EXIT

# The sources: tracked files in a checkout, the tarball's files otherwise,
# but not a build tree inside it (a directory with a config.status: build/,
# or distcheck's _build/sub; build-aux is the tarball's).
if git rev-parse --is-inside-work-tree >/dev/null 2>&1 && [ -d .git ] || [ -f .git ]; then
	git ls-files >"$T/files"
else
	find . -mindepth 2 -name config.status | sed -e 's|^\./||' -e 's|/config\.status$|/|' >"$T/builds"
	find . -type f | sed 's|^\./||' |
		awk 'NR == FNR { b[++n] = $0; next }
		     { for (i = 1; i <= n; i++) if (index($0, b[i]) == 1) next; print }' "$T/builds" - >"$T/files"
fi
# Scanned: our sources; in a tarball, not what configure made of one
# (a file from its template: config.h, built in place, has autoheader's
# comments) nor the Autotools' own scripts in build-aux (libtool's).
awk 'NR == FNR { have[$0] = 1; next } !(($0 ".in") in have)' "$T/files" "$T/files" |
	grep -vE '^build-aux/(ltmain\.sh|tap-driver\.sh|test-driver|compile|depcomp|install-sh|missing|ar-lib|config\.(guess|sub))$' \
	>"$T/src"
grep -E '\.(c|h)$' "$T/src" >"$T/c"
grep -E '(\.sh|local\.mk|Makefile\.am|configure\.ac)$' "$T/src" >"$T/sh"

# names FILE...: "FILE:LINE:NAME" for each file name in a C comment.
c_names() {
	awk '
	function scan(text,   t) {
		while (match(text, /[A-Za-z0-9_][A-Za-z0-9_.\/-]*\.(c|h|sh|mk|sym|md|in|am|ac)([^A-Za-z0-9_]|$)/)) {
			t = substr(text, RSTART, RLENGTH)
			sub(/[^A-Za-z0-9_]$/, "", t)
			print FILENAME ":" FNR ":" t
			text = substr(text, RSTART + RLENGTH)
		}
	}
	FNR == 1 { inc = 0 }
	{
		line = $0; out = ""
		while (line != "") {
			if (inc) {
				e = index(line, "*/")
				if (e) { out = out " " substr(line, 1, e - 1); line = substr(line, e + 2); inc = 0 }
				else { out = out " " line; line = "" }
			} else {
				s = index(line, "/*"); d = index(line, "//")
				if (d && (!s || d < s)) { out = out " " substr(line, d + 2); line = "" }
				else if (s) { line = substr(line, s + 2); inc = 1 }
				else line = ""
			}
		}
		if (out != "") scan(out)
	}' "$@"
}

# The same for shell comments: from a # at the start of a line or after a
# blank, to the end of the line.
sh_names() {
	awk '
	{
		text = $0
		if (!match(text, /(^|[ \t])#/)) next
		if (text ~ /^[ \t]*#[ \t]*(include|define|if|endif)/) next	# C in a here-document
		text = substr(text, RSTART + RLENGTH)
		while (match(text, /[A-Za-z0-9_][A-Za-z0-9_.\/-]*\.(c|h|sh|mk|sym|md|in|am|ac)([^A-Za-z0-9_]|$)/)) {
			t = substr(text, RSTART, RLENGTH)
			sub(/[^A-Za-z0-9_]$/, "", t)
			print FILENAME ":" FNR ":" t
			text = substr(text, RSTART + RLENGTH)
		}
	}' "$@"
}

# known NAME: 0 when NAME is a file of the tree, a header, or external.
cc=${CC:-cc}
known() {
	case $1 in
	kernel/* | drivers/* | include/linux/* | arch/*) return 0 ;;
	esac
	grep -qxF "$1" "$T/files" && return 0
	awk -v n="/$1" 'length($0) > length(n) && substr($0, length($0) - length(n) + 1) == n { f = 1; exit } END { exit !f }' \
		"$T/files" && return 0
	grep -qxF "$1" "$T/external" && return 0
	case $1 in
	*.h) printf '#include <%s>\n' "$1" | $cc -E -x c - >/dev/null 2>&1 && return 0 ;;
	esac
	return 1
}

# The list of other projects' files: "NAME  where" lines, # comments.
sed -e 's/#.*//' -e 's/[[:space:]].*//' -e '/^$/d' "$top_srcdir/tests/docs/external-names" >"$T/external"

# check LIST: the unknown names in LIST ("FILE:LINE:NAME" lines).
check() {
	while IFS=: read -r file line name; do
		known "$name" || echo "$file:$line: names $name, which is not here"
	done <"$1"
}

# shellcheck disable=SC2046
c_names $(cat "$T/c") >"$T/names"
# shellcheck disable=SC2046
sh_names $(cat "$T/sh") >>"$T/names"
check "$T/names" >"$T/missing"
[ -s "$T/names" ]
ok $? "comments name files ($(wc -l <"$T/names") names in $(wc -l <"$T/c") C and $(wc -l <"$T/sh") other files)"
[ ! -s "$T/missing" ]
ok $? "every file a comment names exists ($(wc -l <"$T/missing") do not)" "$(cat "$T/missing")"

# The check is real: a comment naming a missing file is caught, in C and
# in shell, and one naming a file that exists is not.
printf '/* see ref_gone.c and src/clockd/main.c */\nint x; // and old_name.h\n' >"$T/planted.c"
printf '# see gone/tool.sh and tests/tap.sh\n' >"$T/planted.sh"
{ c_names "$T/planted.c"; sh_names "$T/planted.sh"; } >"$T/pnames"
check "$T/pnames" | sed 's/.*names \([^,]*\),.*/\1/' | sort | tr '\n' ' ' >"$T/pmissing"
[ "$(cat "$T/pmissing")" = "gone/tool.sh old_name.h ref_gone.c " ]
ok $? "planted comments: exactly the three missing names are caught ($(cat "$T/pmissing"))"
finish
