#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Out of memory in the daemon (issue #8, part 6). clockd runs under
# failalloc.so (LD_PRELOAD), whose control file makes its malloc, calloc
# and realloc fail with ENOMEM: every one (mode 1) or every Nth (mode N).
# Under mode 1: a client that holds 1023 timers on one CPU (its first slot
# chunk, less one) arms 100 more: the one left in the chunk fires, the 99
# that need a new chunk get ENOMEM through ERROR records, and its 1023
# timers fire; new clients (clockctl timers, a libclockd timer) get a clear
# error, never a hang; the page stays live; the log says so in a bounded
# number of lines. Failures off: new clients are served and the first
# client arms again. Then modes 3, 7 and 13 over rounds of connect, HELLO, arm
# (two chunks; socket ARMs too), cancel and disconnect: the daemon lives,
# and once failures are off it has no client and no pending timer left.
# Finally clockd exits 0 on SIGTERM. Skipped in a sanitizer build: ASan
# owns malloc, and a preloaded allocator would bypass it.
set -u
. "$top_srcdir/tests/stress/lib.sh"
OOMC=$top_builddir/tests/stress/oomclient
SHIM=$top_builddir/tests/stress/.libs/failalloc.so
ROUNDS=${OOM_ROUNDS:-200}

if grep -q '^\(CFLAGS\|LDFLAGS\) = .*-fsanitize=address' "$top_builddir/Makefile"; then
	echo "1..0 # SKIP this build is instrumented with ASan, whose allocator a preloaded malloc would bypass (the plain build runs this test)"
	exit 0
fi
[ -f "$SHIM" ] || { echo "Bail out! $SHIM not built"; exit 99; }

private_dir oom
CTL=$T/failalloc

# mode N: set the injector's mode; failed: how many it failed so far
mode() { "$OOMC" ctl "$CTL" "$1" >/dev/null; }
failed_allocs() { "$OOMC" ctl "$CTL" | awk '{print $6}'; }
# the clients and pending timers clockctl timers reports: "CLIENTS PENDING"
tables() {
	"$CLOCKCTL" timers 2>/dev/null | awk '
		/^CPU/ { t = "cpu"; next } /^PID/ { t = "cli"; next }
		t == "cpu" && NF >= 3 { c += $2; split($3, p, "/"); q += p[1] + p[2] }
		END { print c + 0, q + 0 }'
}
empty() { [ "$(tables)" = "0 0" ]; }
# the daemon's lines about allocation failures
OOM_RE='out of memory\|no memory\|succeed again\|memory again\|grow again'
oom_lines() { grep -c "$OOM_RE" "$T/log"; }

mode 0
LD_PRELOAD=$SHIM FAILALLOC_CTL=$CTL "$CLOCKD" -o page="$T/page" -o control_socket="$T/control" 2>"$T/log" &
pid=$!
if ! poll 10 eval 'live && "$CLOCKCTL" timers >/dev/null 2>&1'; then
	sed 's/^/# clockd: /' "$T/log"
	ok 1 "clockd starts under failalloc.so"
	finish
fi

# ---- every allocation fails ----
mkfifo "$T/fifo"
"$OOMC" hold "$CTL" <"$T/fifo" >"$T/hold" 2>&1 &
hold=$!
exec 3>"$T/fifo"
poll 60 grep -q '^waiting' "$T/hold"
sed 's/^/# client: /' "$T/hold"
grep -q '^armed: base pending 1023 of 1023' "$T/hold"
ok $? "a client holds 1023 timers on one CPU when every allocation starts failing"
grep -q '^oom: accepted 1 fired 1 enomem 99 other 0' "$T/hold"
ok $? "of its 100 more arms, the 99 needing a new slot chunk get ENOMEM, the one left in its chunk is accepted and fires"
grep -q '^base: fired 1023 of 1023' "$T/hold"
ok $? "its 1023 timers armed before still fire"

timeout 30 "$CLOCKCTL" timers >"$T/timers.out" 2>"$T/timers.err"
st=$?
echo "# clockctl timers: exit $st: $(cat "$T/timers.err")"
[ $st -ne 124 ] && [ $st -ne 0 ] && grep -q 'control' "$T/timers.err"
ok $? "a new monitoring client (clockctl timers) gets a clear error and exits non-zero, no hang"
timeout 30 "$OOMC" once >"$T/once.out" 2>&1
st=$?
echo "# libclockd timer: exit $st: $(cat "$T/once.out")"
[ $st -eq 1 ] && grep -q '^error: ' "$T/once.out"
ok $? "a new libclockd client's first arm fails with an error, no hang"
live
ok $? "the page stays live"
kill -0 "$pid" 2>/dev/null
ok $? "clockd is still running"
f=$(failed_allocs)
echo "# allocations failed so far: $f"
[ "$f" -gt 0 ]
ok $? "allocations were failed ($f)"

# ---- failures off ----
mode 0
echo go >&3
exec 3>&-
wait "$hold"
st=$?
hold=
sed -n 's/^after/# client: after/p' "$T/hold"
[ $st -eq 0 ] && grep -q '^after: accepted 100 fired 100 enomem 0 other 0' "$T/hold"
ok $? "failures off: the client's 100 arms all fire"
"$OOMC" once >/dev/null 2>&1
ok $? "failures off: a new libclockd client is served"
poll 10 empty
ok $? "failures off: clockctl timers shows no client and no pending timer ($(tables))"
sleep 1.5 # the sweep that ends the run of failures in the log
lines=$(oom_lines)
grep "$OOM_RE" "$T/log" | sed 's/^/# log: /'
grep -q 'timer base .*out of memory for a chunk of timer slots' "$T/log" &&
	grep -q 'control: .*out of memory for ' "$T/log" && [ "$lines" -le 6 ]
ok $? "the log names what failed, once per run ($lines lines)"

# ---- every Nth allocation fails ----
# Each kind of failure (the control socket's, each base's arms and
# backlogs) logs a line when a run starts and one when a second went by
# without one: so at most 2 per kind and second, however many failed.
kinds=$(( 1 + 2 * $("$CLOCKCTL" timers | awk '/^CPU/ { t = 1; next } /^$/ { t = 0 } t { k++ } END { print k + 0 }') ))
for m in 3 7 13; do
	before=$(failed_allocs)
	lines0=$(oom_lines)
	t0=$(date +%s)
	mode "$m"
	timeout 300 "$OOMC" loop "$ROUNDS" >"$T/loop.$m" 2>&1
	st=$?
	mode 0
	after=$(failed_allocs)
	secs=$(( $(date +%s) - t0 + 1 ))
	sleep 1.5 # for the lines that end the runs
	lines=$(( $(oom_lines) - lines0 ))
	echo "# mode $m: $(cat "$T/loop.$m"); allocations failed: $((after - before)) in $secs s; log lines about it: $lines"
	[ $st -eq 0 ] && kill -0 "$pid" 2>/dev/null && [ $((after - before)) -gt 0 ]
	ok $? "every ${m}th allocation failing, $ROUNDS rounds of connect/HELLO/arm/cancel/disconnect: clockd lives"
	[ "$lines" -le $(( 2 * kinds * secs )) ]
	ok $? "its log about it stays bounded ($lines lines for $((after - before)) failures; at most $(( 2 * kinds * secs )))"
	poll 10 empty
	ok $? "then, failures off: no client and no pending timer left ($(tables))"
	live
	ok $? "the page stayed live"
done
"$OOMC" once >/dev/null 2>&1
ok $? "a new client is served after it all"

kill "$pid"
wait "$pid"
st=$?
pid=
ok $st "clockd exits 0 on SIGTERM (status $st)"
finish
