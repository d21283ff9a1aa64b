#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# One TAP harness: no shell test or test library defines ok(), pass(),
# fail(), skip() or finish() of its own; tests/tap.sh does. Nor poll() or
# wait_for(): tests/clockd.sh polls, and starts and stops the daemons. tests/vm is
# exempt: its scripts run inside the qemu guest (busybox, unnumbered lines)
# or boot it (run.sh numbers the guest's lines as they arrive).
# TAP; $top_srcdir comes from the test harness.
set -u
: "${top_srcdir:?}"
. "$top_srcdir/tests/tap.sh"
cd "$top_srcdir" || bail "cannot enter $top_srcdir"

defs=$(find tests bench -name '*.sh' ! -path tests/tap.sh ! -path tests/clockd.sh ! -path 'tests/vm/*' \
	-exec grep -nHE '^[[:space:]]*(ok|not_ok|pass|fail|skip|skip_all|bail|finish|done_testing|diag|diag_file|poll|wait_for|show_log|stop_daemon)[[:space:]]*\(\)' {} +)
[ -z "$defs" ]
ok $? "no shell test defines its own TAP, polling or daemon-stopping functions" "$defs"

# Nor calls one of the old names that are gone (each library had its own).
calls=$(find tests bench -name '*.sh' ! -path 'tests/vm/*' ! -path tests/docs/harness.sh \
	-exec grep -nHE '(^|[;&|{(]|then|else|do)[[:space:]]*(done_testing|wait_for|not_ok)([[:space:]]|$)|1\.\.\$n\b|\$failed\b' {} +)
[ -z "$calls" ]
ok $? "no shell test calls done_testing, wait_for or not_ok, or prints its own plan (tests/tap.sh: finish)" "$calls"

# Every shell test of make check reaches tests/tap.sh: it sources it, or a
# library that does (transitively).
tests=$(awk '/^TESTS[ \t]*\+?=/ { t = 1 } t { print } t && !/\\$/ { t = 0 }' tests/*/local.mk |
	tr ' \t' '\n\n' | grep '^tests/.*\.sh$' | sort -u)
reach=" tests/tap.sh "
grown=1
while [ -n "$grown" ]; do
	grown=
	for f in $(find tests -name '*.sh'); do
		case $reach in *" $f "*) continue ;; esac
		for s in $(sed -n 's|^[[:space:]]*\. "\$[a-z_]*/\(tests/[^"]*\)".*|\1|p' "$f"); do
			case $reach in *" $s "*) reach="$reach$f "; grown=1; break ;; esac
		done
	done
done
bad=
for t in $tests; do
	case $reach in *" $t "*) ;; *) bad="$bad $t" ;; esac
done
[ -n "$tests" ] && [ -z "$bad" ]
ok $? "each of the $(echo "$tests" | wc -l) shell tests of make check sources tests/tap.sh, or a library that does" "$bad"

# A skip is a plan of 1..0 and exit 0 (skip_all): the TAP driver counts any
# other exit status, 77 too, as an error.
# shellcheck disable=SC2086
out=$(grep -nHE '(^|[;&|{]|then|else)[[:space:]]*exit[[:space:]]+77([^0-9]|$)' $tests $(find tests -name 'lib*.sh' ! -path 'tests/vm/*') tests/clockd.sh tests/tap.sh)
[ -z "$out" ]
ok $? "no shell test of make check or library of theirs skips with exit 77" "$out"
finish
