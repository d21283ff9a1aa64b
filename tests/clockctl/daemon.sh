#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# clockctl against a real daemon on a private page: status, time, jiffies
# and watch while it is live; then stale (SIGSTOP) and gone (kill -9).
# jiffies_wrap_after=1: the 32-bit jiffies wrap a second after the start,
# so jiffies_32 and jiffies_64 differ while the test runs.
. "$top_srcdir/tests/clockctl/lib.sh"

page=$tmp/page
start_daemon -o hz=250 -o jiffies_wrap_after=1
if ! poll "$DEADLINE_S" status_is 0; then
	diag "daemon log:" "$(cat "$tmp/daemon.log")"
	bail "the daemon did not become live within $DEADLINE_S s"
fi
ok 0 "the daemon is live (clockctl status exits 0)"

# --- status ---
run --page "$page" status
[ "$rc" -eq 0 ] && grep -Eq '^ *state: live( |$)' "$tmp/out"
check $? "status says live"
grep -Eq '^ *HZ: 250$' "$tmp/out"
check $? "status shows HZ 250"
grep -Eq "^ *page: $page\$" "$tmp/out"
check $? "status shows the page path"
grep -Eq '^ *flags: .*running' "$tmp/out"
check $? "status decodes the running flag"

run --page "$page" --json status
cp "$tmp/out" "$tmp/status.json"
[ "$rc" -eq 0 ] && jq -e '.hz == 250 and .state == "live" and (.jiffies_64 | type == "number") and
	.jiffies_64 > 0 and .generation >= 1 and .flags.running == true and
	.age_sec * 1000000000 + .age_nsec <= .stale_ns and (.source | length > 0)' "$tmp/out" >/dev/null
check $? "--json status: hz 250, live, jiffies_64 > 0, generation >= 1, running"
jq -e --arg p "$page" '.page == $p and .pid > 0 and (.vclock | IN("none", "tsc", "posix"))' \
	"$tmp/out" >/dev/null
check $? "--json status: page, pid, vclock mode"
source=$(jq -r .source "$tmp/status.json")
run --page "$page" status
grep -Eq "^ *source: $source\$" "$tmp/out"
check $? "status shows the source ($source)"

# --- time ---
run --page "$page" --json time
cp "$tmp/out" "$tmp/time.json"
[ "$rc" -eq 0 ] && jq -e 'keys == (["realtime", "monotonic", "monotonic_raw", "realtime_coarse",
	"monotonic_coarse", "tai"] | sort)' "$tmp/out" >/dev/null
check $? "--json time has the six clocks (tai: CLOCKD_TAI)"
jq -e '[.[] | (.res_ns > 0) and (.nsec >= 0) and (.nsec < 1000000000)] | all' "$tmp/out" >/dev/null
check $? "--json time: every clock has res_ns > 0 and nsec in [0, 1e9)"
jq -e '.monotonic | (.diff_ns | fabs) < 1000000000 and
	.diff_ns == (.sec - .kernel_sec) * 1000000000 + .nsec - .kernel_nsec' "$tmp/out" >/dev/null
check $? "--json time: monotonic within 1 s of the kernel's, fields consistent"
run --page "$page" time
[ "$rc" -eq 0 ] && [ "$(wc -l <"$tmp/out")" -eq 7 ] && grep -q '^monotonic_coarse ' "$tmp/out" &&
	grep -q '^tai ' "$tmp/out"
check $? "time prints a header and a line per clock"

# --- jiffies ---
run --page "$page" --json jiffies
[ "$rc" -eq 0 ] && jq -e '.hz == 250 and .initial_jiffies == 4294967296 - 250' "$tmp/out" >/dev/null
check $? "--json jiffies: hz 250, initial_jiffies one second before the wrap"
wrapped() {
	"$CLOCKCTL" --page "$page" --json jiffies 2>/dev/null | jq -e '.wraps == 1' >/dev/null
}
poll "$DEADLINE_S" wrapped
ok $? "the 32-bit jiffies wrap (jiffies_64 passes 2^32)"
run --page "$page" --json jiffies
[ "$rc" -eq 0 ] && jq -e '.jiffies_32 == .jiffies_64 % 4294967296 and .jiffies_32 < .jiffies_64 and
	.ticks_to_wrap == 4294967296 - .jiffies_32 and .jiffies_64 >= .initial_jiffies' \
	"$tmp/out" >/dev/null
check $? "--json jiffies: jiffies_32 == jiffies_64 mod 2^32 after the wrap, ticks to the next"
run --page "$page" jiffies
[ "$rc" -eq 0 ] && grep -Eq '^ *HZ: 250$' "$tmp/out" && grep -Eq '^ *jiffies: [0-9]+ \(32-bit view, wraps: 1\)$' "$tmp/out"
check $? "jiffies shows HZ 250 and the wrap"

# --- watch ---
run --page "$page" watch -n 3 -i 0.05
[ "$rc" -eq 0 ] && [ "$(wc -l <"$tmp/out")" -eq 3 ] && [ "$(grep -c ' live$' "$tmp/out")" -eq 3 ]
check $? "watch -n 3 -i 0.05 prints exactly 3 live lines"
run --page "$page" --json watch -n 2 -i 0.05
n=$(jq -c . "$tmp/out" 2>/dev/null | wc -l)
[ "$rc" -eq 0 ] && [ "$(wc -l <"$tmp/out")" -eq 2 ] && [ "$n" -eq 2 ]
check $? "--json watch -n 2 prints 2 lines, each a JSON document"
jq -se 'length == 2 and all(.state == "live") and .[1].jiffies_64 >= .[0].jiffies_64 and
	[.[1].monotonic_sec, .[1].monotonic_nsec] > [.[0].monotonic_sec, .[0].monotonic_nsec]' \
	"$tmp/out" >/dev/null
check $? "--json watch: live, jiffies and monotonic move forward"

for sig in INT TERM; do
	# A fresh file: the last round's output must not pass for this one's
	# (the signal would reach the shell's child before it runs clockctl).
	rm -f "$tmp/watch.out"
	"$CLOCKCTL" --page "$page" watch -i 0.05 >"$tmp/watch.out" 2>&1 &
	watch_pid=$!
	poll "$DEADLINE_S" test -s "$tmp/watch.out"
	kill -"$sig" "$watch_pid"
	wait "$watch_pid"
	ok $? "watch (count 0) stops cleanly on SIG$sig, exit 0"
done

# --- under valgrind ---
if grep -q '^CFLAGS = .*-fsanitize' "$top_builddir/Makefile"; then
	skip "this build is instrumented with a sanitizer, which valgrind cannot run (the plain build runs this check)"
elif command -v valgrind >/dev/null 2>&1; then
	for args in "--json status" "time" "jiffies" "watch -n 2 -i 0.01" "--csv sources" "timers" \
		"-c timers" "tracking --json" "wait"; do
		# shellcheck disable=SC2086 # the words are the arguments
		"$top_builddir/libtool" --mode=execute valgrind -q --error-exitcode=9 \
			--leak-check=full --errors-for-leak-kinds=all "$CLOCKCTL" --page "$page" \
			$args >"$tmp/out" 2>"$tmp/err"
		rc=$?
		check $rc "valgrind memcheck: clockctl $args, no errors or leaks"
	done
else
	skip "valgrind is not installed"
fi

# --- stale: the daemon is alive but stopped ---
kill -STOP "$daemon_pid"
poll "$DEADLINE_S" status_is 1
run --page "$page" status
[ "$rc" -eq 1 ] && grep -Eq '^ *state: stale \(no update for [0-9]+ ms' "$tmp/out" && one_error_line
check $? "a stopped daemon: status says stale (no update for N ms), exits 1"
for verb in time jiffies sources tracking timers "watch -n 1" "--json sources" "-c tracking"; do
	# shellcheck disable=SC2086 # the words are the arguments
	run --page "$page" $verb
	[ "$rc" -eq 1 ] && one_error_line && grep -Eq 'stale \(no update for [0-9]+ ms' "$tmp/err" &&
		grep -qF "$page" "$tmp/err" && ! grep -qi 'file handle' "$tmp/err" && [ ! -s "$tmp/out" ]
	check $? "a stopped daemon: $verb exits 1 naming the page and 'stale (no update for N ms)'"
done
kill -CONT "$daemon_pid"
poll "$DEADLINE_S" status_is 0
ok $? "a continued daemon is live again"

# --- gone: the daemon was killed ---
{
	kill -KILL "$daemon_pid"
	wait "$daemon_pid"
} 2>/dev/null # the shell's "Killed" notice
daemon_pid=
run --page "$page" status
[ "$rc" -eq 1 ] && grep -Eq '^ *state: gone' "$tmp/out"
check $? "after kill -9: status says gone, exits 1"
run --page "$page" --json status
[ "$rc" -eq 1 ] && jq -e '.state == "gone" and .hz == 250' "$tmp/out" >/dev/null
check $? "after kill -9: --json status has state gone and the last header"
for verb in time jiffies sources tracking timers "watch -n 1 -i 0.01" "--json tracking" "-c sources"; do
	# shellcheck disable=SC2086 # the words are the arguments
	run --page "$page" $verb
	[ "$rc" -eq 1 ] && one_error_line && grep -q gone "$tmp/err" && grep -qF "$page" "$tmp/err" &&
		[ ! -s "$tmp/out" ]
	check $? "after kill -9: $verb exits 1 naming the page and 'gone', nothing on stdout"
done

finish
