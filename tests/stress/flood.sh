#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Flood and quotas (issue #8, part 3): tests/stress/flood's four attackers
# (timers beyond the quota, connections without end, garbage, requests far
# beyond the message quota) against a daemon with small quotas, while a
# well-behaved client's timer runs; its checks, then the daemon's: it said
# why it dropped the message flooder, it is live, no attacker is left
# among its clients, and it stops cleanly.
. "$top_srcdir/tests/daemon/common.sh"
CLOCKCTL=$top_builddir/src/clockctl/clockctl
FLOOD=$top_builddir/tests/stress/flood
export CLOCKD_SOCKET=$T/control
MAXC=32
# Under ASan, freed memory waits in a quarantine (256 MB) before it is
# reused: the daemon's resident memory would grow from one flood to the
# next by what the first one freed. Without it, ASan's allocator reuses
# memory as malloc does, and the check measures the daemon again (leaks
# themselves are LeakSanitizer's at exit). Ignored by a plain build.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0"

# Four attackers and the daemon's own threads keep both CPUs busy: a
# SCHED_OTHER tick thread can wait past the stale limit (100 ms; seen once
# in CI's ASan run), and the good client's reads fail with ESTALE. The
# quotas cannot help there; the tick thread's priority does: SCHED_FIFO 40
# by default, as root.
if ! start_daemon "$T/clockd.log" -o hz=1000 -o max_clients=$MAXC -o client_max_msgs_per_sec=50 \
	-o client_max_timers=4096; then
	ok 1 "the daemon starts"
	finish
fi
i=0
while [ ! -S "$T/control" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done

# The connection flooder holds all but 4 of the places: the good client,
# the timer and message flooders get in, the garbage sender contends for
# the last one with the connection flooder's further tries, and what finds
# the server full is refused.
cpu=$(($(nproc) - 1))
"$FLOOD" "$daemon_pid" $cpu $((MAXC - 4)) >"$T/flood" 2>&1
st=$?
grep '^#' "$T/flood"
grep -E '^(not )?ok ' "$T/flood" >"$T/flood.tap"
while read -r res num _ desc; do
	[ "$res" = ok ]
	ok $? "$desc"
done <<EOT
$(sed 's/^not ok/not_ok/' "$T/flood.tap")
EOT
[ $st -eq 0 ] && [ -s "$T/flood.tap" ]
ok $? "flood ran all its checks (exit $st)"
grep -v -E '^(#|(not )?ok |1\.\.)' "$T/flood" | sed 's/^/# flood: /'

# once_a_run START END: the log has at least one START line, and each
# later START follows an END (a run ends after 10 s without an occurrence;
# on a loaded machine an attacker can miss a flood phase or two).
once_a_run() {
	awk -v s="$1" -v e="$2" '$0 ~ s { if (on) bad = 1; on = 1; n++ }
		$0 ~ e { if (!on) bad = 1; on = 0 }
		END { exit (bad || n == 0) }' "$T/clockd.log"
}
# The flooder comes back at once, and again: one line for the run.
floods=$(grep -c 'sent [0-9]* messages in a second, quota 50/s: disconnected' "$T/clockd.log")
once_a_run 'messages in a second, quota 50/s: disconnected' 'no message flood for'
ok $? "the daemon logged dropping the message flooder, once a run ($floods lines)"
grep -E 'messages in a second|no message flood' "$T/clockd.log" | head -6 | sed 's/^/# clockd: /'
# Thousands of refusals, one line for the run.
refusals=$(grep -c 'refused: .* clients already [(]max_clients[)]' "$T/clockd.log")
once_a_run 'refused: .* clients already [(]max_clients[)]' 'no client refused for'
ok $? "the refusals beyond max_clients are logged once a run ($refusals lines)"
# Thousands of connections came and went: none is news at the default
# level (info), so the log holds a few lines, not one per connection.
lines=$(wc -l <"$T/clockd.log")
[ "$lines" -le 20 ]
ok $? "the daemon's log is not flooded ($lines lines)"
"$CLOCKCTL" status | grep -q 'state: live'
ok $? "the page is live after the flood"
i=0
until "$CLOCKCTL" --json timers | grep -q '"clients":\[\]' || [ $i -ge 100 ]; do sleep 0.1; i=$((i + 1)); done
"$CLOCKCTL" --json timers | grep -q '"clients":\[\]'
ok $? "no attacker is left among the daemon's clients"
kill -TERM "$daemon_pid"
wait "$daemon_pid"
ok $? "the daemon exits 0 on SIGTERM"
daemon_pid=
finish
