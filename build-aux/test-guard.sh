#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The tests' LOG_COMPILER (tests/local.mk): runs one test (its command
# line) in a session of its own; stops it after CLOCKD_TEST_TIMEOUT
# seconds (default 1200) with a "Bail out!" saying so; and once it has
# ended kills whatever it left in its session, naming it in a TAP
# comment. A test's leftover that held the test's output kept the TAP
# driver, and so make check and CI, waiting for ever (tests/stress/paths.sh
# once did). The test's exit status is the guard's.
if [ "${CLOCKD_TEST_GUARD:-}" != inner ]; then
	CLOCKD_TEST_GUARD=inner exec setsid -w /bin/sh "$0" "$@"
fi
unset CLOCKD_TEST_GUARD
limit=${CLOCKD_TEST_TIMEOUT:-1200}
"$@" &
test_pid=$!
(
	trap 'kill "$nap" 2>/dev/null; exit 0' TERM
	sleep "$limit" &
	nap=$!
	wait "$nap" || exit 0
	echo "Bail out! test-guard: still running after $limit s (CLOCKD_TEST_TIMEOUT): stopped"
	kill -TERM "$test_pid" 2>/dev/null
	sleep 10
	kill -KILL "$test_pid" 2>/dev/null
) &
watchdog=$!
wait "$test_pid"
status=$?
kill "$watchdog" 2>/dev/null
wait "$watchdog" 2>/dev/null

# leftovers: the processes of this session but this shell and its own
# children (the subshell listing them, ps, awk).
leftovers() {
	ps -o pid=,ppid=,args= --sid "$$" 2>/dev/null | awk -v me="$$" '$1 != me && $2 != me && $3 != "ps" && $3 != "awk" && $0 !~ /<defunct>$/'
}
left=$(leftovers)
if [ -n "$left" ]; then
	echo "$left" | sed 's/^ */# test-guard: left behind, killed: /'
	for p in $(echo "$left" | awk '{ print $1 }'); do kill -TERM "$p" 2>/dev/null; done
	sleep 0.5
	for p in $(leftovers | awk '{ print $1 }'); do kill -KILL "$p" 2>/dev/null; done
fi
exit "$status"
