#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The log flood of issue #16: a client that corrupts its submission ring
# and reconnects (LOGFLOOD_ROUNDS times, 2000) used to write one warning per
# connection. Every per-client log line is once a run: the daemon's log
# stays O(1) lines (at most two per timer base: the first of the run and
# its end with the count), the run ends with the count once quiet for 10 s,
# and the daemon keeps serving others throughout.
set -u
. "$top_srcdir/tests/stress/lib.sh"
HOSTILE=$top_builddir/tests/stress/hostile
rounds=${LOGFLOOD_ROUNDS:-2000}
private_dir logflood

start_clockd
before=$(wc -l <"$T/log")
ncpu=$(nproc)

out=$("$HOSTILE" corrupt "$T/control" "$rounds")
ok $? "a client corrupted its ring and reconnected $rounds times ($out)"
corrupt=$(grep -c "corrupt, client no longer served" "$T/log")
lines=$(($(wc -l <"$T/log") - before))
echo "# log lines during the attack: $lines ($corrupt 'corrupt'), CPUs $ncpu"
[ "$corrupt" -ge 1 ] && [ "$corrupt" -le "$ncpu" ] && [ "$lines" -le $((2 * ncpu + 4)) ]
ok $? "O(1) log lines: $corrupt 'corrupt' (at most one per timer base), $lines in all"
live && "$CLOCKCTL" timers >/dev/null 2>&1
ok $? "the daemon still serves"

# The run ends, with its count, once quiet for 10 s (base loops wake once a
# second while a run is on).
i=0
while ! grep -q "no client with corrupt shared memory for 10 s (after" "$T/log" && [ $i -lt 300 ]; do
	sleep 0.1
	i=$((i + 1))
done
total=$(sed -n 's/.*no client with corrupt shared memory for 10 s (after \([0-9]*\) occurrence.*/\1/p' "$T/log" |
	awk '{ s += $1 } END { print s + 0 }')
echo "# corrupt rings counted: $total"
[ "$total" -ge 2 ]
ok $? "the run's end line counts the corrupt clients ($total)"
lines=$(($(wc -l <"$T/log") - before))
[ "$lines" -le $((2 * ncpu + 4)) ]
ok $? "still O(1) lines with the ends of the runs: $lines"
kill "$pid"
wait "$pid"
pid=
sed 's/^/# clockd: /' "$T/log" | tail -n 20
finish
