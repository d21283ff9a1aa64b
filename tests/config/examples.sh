#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The scenario configurations shipped in examples/conf (installed to the
# documentation's examples): each passes clockd --check-config, each key it
# sets is in the effective configuration as written, and with its
# commented alternatives uncommented it is still valid. Every file there
# is installed (examples/local.mk lists it).
: "${top_srcdir:?run from make check (top_srcdir unset)}" "${top_builddir:?}"
CLOCKD=$top_builddir/src/clockd/clockd
T=$(mktemp -d "${TMPDIR:-/tmp}/clockd-examples.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT
. "$top_srcdir/tests/tap.sh"

set -- "$top_srcdir"/examples/conf/*.conf
[ -e "$1" ] || { echo "Bail out! no examples/conf/*.conf"; exit 99; }
for f in "$@"; do
	name=examples/conf/${f##*/}
	"$CLOCKD" --check-config -c "$f" -o confdir=off >"$T/out" 2>"$T/err"
	st=$?
	sed 's/^/# /' "$T/err"
	ok $st "$name passes clockd --check-config"

	# "key = value" lines as the effective configuration prints them:
	# lists without blanks, text quoted or not.
	missing=
	sed -n 's/^\([a-z0-9_]*\) *= *\([^#]*[^# ]\) *\(#.*\)\{0,1\}$/\1 \2/p' "$f" >"$T/keys"
	while read -r key val; do
		val=$(printf '%s' "$val" | sed 's/, */,/g; s/^"\(.*\)"$/\1/')
		grep -qx -e "$key = $val" -e "$key = \"$val\"" "$T/out" || missing="$missing $key"
	done <"$T/keys"
	[ $st -eq 0 ] && [ -s "$T/keys" ] && [ -z "$missing" ]
	ok $? "$name: every key it sets is in effect (missing:${missing:- none})"

	# Uncommented, the alternative (the last line of a key) wins.
	sed 's/^#\([a-z0-9_]* *=\)/\1/' "$f" >"$T/all.conf"
	awk -F' *= *' 'NR == FNR { if (/^[a-z0-9_]+ *=/) last[$1] = FNR; next }
		/^[a-z0-9_]+ *=/ && last[$1] != FNR { next } { print }' "$T/all.conf" "$T/all.conf" >"$T/alt.conf"
	"$CLOCKD" --check-config -c "$T/alt.conf" -o confdir=off >/dev/null 2>"$T/err"
	st=$?
	sed 's/^/# /' "$T/err"
	ok $st "$name: its commented alternatives are valid too"

	grep -q "examples/conf/${f##*/}" "$top_srcdir/examples/local.mk"
	ok $? "$name is installed (examples/local.mk)"
done

finish
