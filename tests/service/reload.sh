#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Reload (SIGHUP, and clockctl reload which sends it): a broken
# configuration file is rejected as a whole, each fault logged as
# FILE:LINE, and the daemon keeps serving with its old values (HZ, and
# log_level: no debug line appears); a good file then applies log_level at
# once and names the keys that need a restart. clockctl reload waits for
# the daemon's reload record and reports it: exit 3 with the FILE:LINE
# reasons for a rejected file (also in a drop-in), "no change" when there
# is none, the keys otherwise. When stderr is the journal
# ($JOURNAL_STREAM names it) the lines carry "<N>" priorities instead of
# "clockd: ", the FILE:LINE errors as warnings.
. "$top_srcdir/tests/service/lib.sh"

conf=$tmp/clockd.conf
log=$tmp/clockd.log
printf 'hz = 500\nlog_level = info\n' >"$conf"
"$CLOCKD" -c "$conf" -o page="$tmp/page" 2>"$log" &
dpid=$!
pids="$pids $dpid"
poll "$DEADLINE_S" page_live || { diag_file "$log"; bail "clockd did not go live"; }

# hz_now: the HZ the page publishes.
hz_now() { "$CLOCKCTL" --json status 2>/dev/null | sed -n 's/.*"hz": *\([0-9]*\).*/\1/p'; }
jiffies_now() { "$CLOCKCTL" --json jiffies 2>/dev/null | sed -n 's/.*"jiffies_64": *\([0-9]*\).*/\1/p'; }
[ "$(hz_now)" = 500 ]
ok $? "the daemon runs at hz 500 from $conf"

# Line 2 would be valid and change the level; lines 3 and 4 are faults.
cat >"$conf" <<'CONF'
hz = 250
log_level = debug
no_such_key = 1
stall_ticks = 1
CONF
kill -HUP "$dpid"
poll "$DEADLINE_S" has "$log" 'reload: configuration rejected'
ok $? "SIGHUP with a broken file: the reload is rejected"
has "$log" "$conf:3: no_such_key: unknown key" && has "$log" "$conf:4: stall_ticks: 1 is out of range"
ok $? "each fault is logged as FILE:LINE: KEY: why"
! has "$log" 'log_level is now|takes effect at the next restart'
ok $? "nothing of the broken file was applied (its valid log_level line neither)"
j1=$(jiffies_now)
poll "$DEADLINE_S" sh -c "[ \"\$(\"$CLOCKCTL\" --json jiffies 2>/dev/null | sed -n 's/.*\"jiffies_64\": *\([0-9]*\).*/\1/p')\" -gt ${j1:-0} ]"
ok $? "the daemon keeps serving: the page is live and jiffies advance"
[ "$(hz_now)" = 500 ] && kill -0 "$dpid"
ok $? "with its old values (hz $(hz_now))"

"$CLOCKCTL" reload >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 3 ] && grep -q "rejected the configuration" "$tmp/err" &&
	grep -q "^$conf:3: no_such_key: unknown key" "$tmp/err" && grep -q "^$conf:4: stall_ticks: 1 is out of range" "$tmp/err"
ok $? "clockctl reload of the broken file exits 3 (exit $rc) with the daemon's FILE:LINE reasons"
[ $tap_failed -eq 0 ] || diag "$tmp/out" "$tmp/err"
[ "$(stat -c %a "$tmp/page.reload")" = 600 ]
ok $? "the reload record beside the page is mode 0600 ($(stat -c %a "$tmp/page.reload"))"

printf 'hz = 500\nlog_level = info\n' >"$conf"
mkdir "$conf.d"
printf 'hz = x\n' >"$conf.d/50-bad.conf"
"$CLOCKCTL" reload >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 3 ] && grep -q "^$conf.d/50-bad.conf:1: hz: 'x' is not a number" "$tmp/err"
ok $? "a broken drop-in file rejects the reload too (exit $rc), naming its FILE:LINE"
rm -r "$conf.d"
"$CLOCKCTL" reload >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 0 ] && grep -q "^no change" "$tmp/out"
ok $? "clockctl reload of the running configuration says no change (exit $rc): $(cat "$tmp/out")"
"$CLOCKCTL" --json reload >"$tmp/out" 2>"$tmp/err"
grep -q '"reload": *"unchanged"' "$tmp/out"
ok $? "--json reload: $(cat "$tmp/out")"

# A good file, through clockctl reload.
printf 'hz = 250\nlog_level = debug\n' >"$conf"
"$CLOCKCTL" reload >"$tmp/out" 2>&1
rc=$?
[ $rc -eq 0 ] && grep -q "pid $dpid" "$tmp/out" && grep -q "log_level is now debug" "$tmp/out" &&
	grep -q "hz changed; it takes effect at the next restart" "$tmp/out"
ok $? "clockctl reload of a good file (exit $rc) prints what changed: $(cat "$tmp/out" | tr '\n' ' ')"
poll "$DEADLINE_S" has "$log" 'reload: log_level is now debug'
ok $? "a good file: log_level applies at once"
has "$log" 'reload: hz changed; it takes effect at the next restart' && [ "$(hz_now)" = 500 ]
ok $? "hz is named as needing a restart, and the daemon keeps 500 until then"

kill -TERM "$dpid"
wait "$dpid"
rc=$?
[ $rc -eq 0 ]
ok $? "the daemon stops cleanly (exit $rc)"
[ $tap_failed -eq 0 ] || diag_file "$log"

"$CLOCKCTL" reload >"$tmp/out" 2>&1
rc=$?
[ $rc -eq 1 ]
ok $? "clockctl reload without a running daemon exits 1: $(cat "$tmp/out")"

# --- journal priorities ---------------------------------------------------------
printf 'hz = 250\nno_such_key = 1\n' >"$conf"
: >"$tmp/j.log"
JOURNAL_STREAM=$(stat -c '%d:%i' "$tmp/j.log") "$CLOCKD" -c "$conf" -o page="$tmp/page" 2>>"$tmp/j.log"
has "$tmp/j.log" "^<4>$conf:2: no_such_key: unknown key\$" && has "$tmp/j.log" '^<3>.*configuration rejected$' &&
	! has "$tmp/j.log" '^clockd: '
ok $? "stderr is the journal: <4> FILE:LINE errors, <3> for the fatal one, no clockd: prefix"
JOURNAL_STREAM=1:1 "$CLOCKD" -c "$conf" -o page="$tmp/page" 2>"$tmp/k.log"
has "$tmp/k.log" "^$conf:2: no_such_key: unknown key\$" && has "$tmp/k.log" '^clockd: .*configuration rejected$' &&
	! has "$tmp/k.log" '^<[0-9]>'
ok $? "a JOURNAL_STREAM naming another file (inherited) changes nothing"
[ $tap_failed -eq 0 ] || diag_file "$tmp/j.log" "$tmp/k.log"

finish
