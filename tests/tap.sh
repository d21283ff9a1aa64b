# SPDX-License-Identifier: LGPL-2.1-or-later
# The TAP harness of the shell tests (sourced, never run). Every shell test
# under tests/ sources this file, directly or through its directory's
# library, and defines no ok() of its own (tests/docs/harness.sh checks
# that).
#
#   ok STATUS DESCRIPTION [DETAIL]  a check passing when STATUS is 0; DETAIL
#                                   (lines) is shown as comments if it fails
#   pass DESCRIPTION                a check that passed
#   fail DESCRIPTION [DETAIL]       a check that failed
#   skip WHY                        a check this run cannot make
#   skip DESCRIPTION WHY            ... naming the check
#   diag LINE...                    comment lines
#   diag_file [FILE...]             a file's (or stdin's) lines as comments
#   skip_all WHY                    the whole test is skipped: plan 1..0, exit 0
#   bail WHY                        the harness broke: Bail out!, exit 99
#   finish                          the plan; exit 0 if every check passed
#
# The plan is printed last (TAP allows it at the end), so a test need not
# count its checks in advance. State: tap_n (checks so far), tap_failed.

tap_n=0
tap_failed=0

ok() {
	tap_n=$((tap_n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $tap_n - $2"
	else
		echo "not ok $tap_n - $2"
		tap_failed=$((tap_failed + 1))
		[ -z "${3:-}" ] || printf '%s\n' "$3" | sed 's/^/# /'
	fi
}

pass() {
	ok 0 "$1"
}

fail() {
	ok 1 "$1" "${2:-}"
}

skip() {
	tap_n=$((tap_n + 1))
	if [ $# -ge 2 ]; then
		echo "ok $tap_n - $1 # SKIP $2"
	else
		echo "ok $tap_n # SKIP $1"
	fi
}

diag() {
	printf '%s\n' "$@" | sed 's/^/# /'
}

diag_file() {
	sed 's/^/# /' "$@"
}

skip_all() {
	echo "1..0 # SKIP $*"
	exit 0
}

bail() {
	echo "Bail out! $*"
	exit 99
}

finish() {
	echo "1..$tap_n"
	[ "$tap_failed" -eq 0 ]
	exit $?
}
