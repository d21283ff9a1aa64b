#!/bin/sh
# clockctl's output options against a real daemon on a private page: global
# options anywhere on the line, -c/--csv, -v legends, VERB --help, one name
# and unit per quantity, JSON that a reader using doubles (jq 1.6, python's
# float) reads exactly, and wait (success and timeout).
. "$top_srcdir/tests/clockctl/lib.sh"

page=$tmp/page
export CLOCKD_SHM="$page"

# --- wait: started before the daemon, it returns once the page is live ---
"$CLOCKCTL" wait --timeout 30 >"$tmp/wait.out" 2>"$tmp/wait.err" &
wait_pid=$!
sleep 0.3
start_daemon -o hz=250 -o reference=none
wait "$wait_pid"
rc=$?
[ "$rc" -eq 0 ] && grep -q '^clockd is live' "$tmp/wait.out"
ok $? "wait started before the daemon returns 0 once it is live (status $rc)"
[ "$rc" -eq 0 ] || diag "$(cat "$tmp/wait.out" "$tmp/wait.err" "$tmp/daemon.log")"
[ "$rc" -eq 0 ] || bail "no live daemon"

run wait --timeout 5 --json
[ "$rc" -eq 0 ] && jq -e '.ready == true and .state == "live"' "$tmp/out" >/dev/null
check $? "wait --json on a live daemon: ready, live"
# No reference: the page never says synced, so --synced times out.
run wait --synced --timeout 0.5
[ "$rc" -eq 1 ] && grep -q 'not synchronised' "$tmp/err"
check $? "wait --synced --timeout 0.5 without a reference: exit 1, 'not synchronised'"

# --- global options anywhere ---
for line in "--json time" "time --json" "--page $page time --json" "time --page=$page --json"; do
	# shellcheck disable=SC2086 # the words are the arguments
	run $line
	[ "$rc" -eq 0 ] && jq -e '.realtime.sec > 0' "$tmp/out" >/dev/null
	check $? "clockctl $line: JSON"
done
run watch -n 1 -i 0.01
[ "$rc" -eq 0 ] && grep -q ' offset -  frequency -  live$' "$tmp/out"
check $? "watch without a reference: offset - and frequency -"
run watch -n 1 --csv -i 0.01
[ "$rc" -eq 0 ] && [ "$(wc -l <"$tmp/out")" -eq 2 ] && head -n 1 "$tmp/out" | grep -q '^time,jiffies_64,'
check $? "watch -n 1 --csv -i 0.01: a header and one record"
run -v sources
grep -q '^  FAULT ' "$tmp/out" && grep -q '^ROLE ' "$tmp/out"
check $? "-v sources: a legend, then the table"
run sources -v
grep -q '^  FAULT ' "$tmp/out"
check $? "sources -v: the same"
for v in time timers tracking "watch -n 1"; do
	# shellcheck disable=SC2086 # the words are the arguments
	run $v -v
	[ "$rc" -eq 0 ] && [ "$(grep -c '^  ' "$tmp/out")" -ge 3 ]
	check $? "$v -v prints a legend"
done
run sources
! grep -q '^  FAULT ' "$tmp/out"
check $? "no legend without -v"

# --- VERB --help ---
for v in run wait watch timers status; do
	run "$v" --help
	[ "$rc" -eq 0 ] && grep -q "^Usage: clockctl .*$v" "$tmp/out" && [ ! -s "$tmp/err" ]
	check $? "$v --help exits 0 with the verb's usage"
done
run run --help
grep -q -- '--page PATH' "$tmp/out"
check $? "run --help names run's --page"
run timers --help
grep -q 'beside the time page' "$tmp/out" && grep -q '"control"' "$tmp/out"
check $? "timers --help: the socket defaults to the file control beside the page"

# --- CSV: a header and records, the same names as JSON ---
csv_keys() { head -n 1 "$tmp/out" | tr ',' '\n' | sort | tr '\n' ' '; }
run -c time
[ "$rc" -eq 0 ] && [ "$(wc -l <"$tmp/out")" -eq 7 ] && head -n 1 "$tmp/out" | grep -q '^time,clock,sec,nsec,' &&
	grep -q '^[0-9-]*T[0-9:]*\.[0-9]\{9\}Z,monotonic_coarse,' "$tmp/out" && grep -q '^[0-9-]*T[0-9:.]*Z,tai,' "$tmp/out"
check $? "-c time: a header and one record per clock"
# The time column: when clockctl took the record, RFC 3339 UTC, within a
# minute of the kernel's clock (a loaded machine), one stamp per print.
stamp=$(sed -n '2s/,.*//p' "$tmp/out")
now=$(date -u +%s)
then_s=$(date -u -d "$stamp" +%s 2>/dev/null || echo 0)
[ $((now - then_s)) -ge 0 ] && [ $((now - then_s)) -le 60 ] &&
	[ "$(tail -n +2 "$tmp/out" | cut -d, -f1 | sort -u | wc -l)" -eq 1 ]
check $? "-c rows start with the time they were taken ($stamp), one stamp for the rows of a print"
run --csv tracking
csv=$(csv_keys)
run --json tracking
json=$(jq -r 'keys[]' "$tmp/out" | sort | tr '\n' ' ')
[ -n "$csv" ] && [ "$csv" = "$(printf '%s\n' $json time | sort | tr '\n' ' ')" ]
check $? "--csv tracking has the keys of --json tracking and time ($csv)"
run --csv status
head -n 1 "$tmp/out" | grep -q 'flags.synced' && [ "$(wc -l <"$tmp/out")" -eq 2 ]
check $? "--csv status: one record, nested keys joined with a dot (flags.synced)"
run --csv sources
[ "$rc" -eq 0 ] && python3 -c '
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert rows and all(r["fault"] in ("none", "stalled", "open", "backwards", "stepped", "gone", "error") for r in rows)
assert any(r["role"] == "tick" and r["state"] == "active" for r in rows)
' "$tmp/out"
check $? "--csv sources parses as CSV, one record per device, fault names"
run --csv timers
[ "$rc" -eq 0 ] && grep -q '^time,record,cpu,' "$tmp/out" && grep -q '^[^,]*,cpu,0,' "$tmp/out" &&
	grep -q '^time,record,pid,uid,' "$tmp/out"
check $? "--csv timers: the CPU table and the client table, each with its header"

# --- one name and one unit per quantity ---
run --json status
st=$(jq -c '{f: (.freq_ppb | type), r: has("frequency_ppm")}' "$tmp/out")
run --json tracking
tr=$(jq -c '{f: (.freq_ppb | type), r: has("frequency_ppm")}' "$tmp/out")
ref=$(jq -r .reference "$tmp/out")
[ "$st" = '{"f":"number","r":false}' ] && [ "$tr" = "$st" ] && [ "$ref" = none ]
check $? "freq_ppb in status and tracking; reference \"$ref\" in JSON"
run tracking
grep -Eq '^ *reference: none$' "$tmp/out"
check $? "reference none in the text too"
run status
grep -Eq 'frequency [+-][0-9]+\.[0-9]{3} ppm' "$tmp/out"
check $? "status shows the frequency in ppm, as tracking"

# --- JSON exact in a reader that uses doubles ---
# The readers round: a realtime count of ns (above 2^53) changes in both,
# so the check below can fail.
big=1796480993476478308
[ "$(echo "$big" | jq .)" != "$big" ] &&
	[ "$(python3 -c 'import json,sys; print(int(json.loads(sys.argv[1], parse_int=float)))' "$big")" != "$big" ]
ok $? "jq and python's float reader do lose digits above 2^53 (so the checks below mean something)"
for line in "status" "time" "jiffies" "sources" "tracking" "timers" "watch -n 1" "wait" "--version"; do
	# shellcheck disable=SC2086 # the words are the arguments
	run --json $line
	[ "$rc" -eq 0 ] && python3 -c '
import json, sys
text = open(sys.argv[1]).read()
exact = json.loads(text)
rounded = json.loads(text, parse_int=float)
def walk(a, b):
    if isinstance(a, dict):
        return all(walk(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return all(walk(x, y) for x, y in zip(a, b))
    if isinstance(a, bool) or not isinstance(a, int):
        return True
    return int(b) == a and abs(a) <= 2**53
sys.exit(0 if walk(exact, rounded) else 1)
' "$tmp/out"
	check $? "--json $line: every integer reads exactly as a double"
done
run --json time
sec=$(jq .realtime.sec "$tmp/out")
nsec=$(jq .realtime.nsec "$tmp/out")
exact=$(python3 -c 'import json,sys; d = json.load(open(sys.argv[1]))["realtime"]; print(d["sec"], d["nsec"], d["sec"] * 10**9 + d["nsec"] > 2**53)' "$tmp/out")
[ "$sec $nsec True" = "$exact" ]
check $? "--json time: jq reads realtime sec $sec and nsec $nsec exactly (a value above 2^53 as a whole)"
run time
text=$(sed -n 's/^realtime \{1,\}\([0-9]*\)\.[0-9]* .*/\1/p' "$tmp/out")
[ -n "$text" ] && [ "$text" -ge "$sec" ] && [ "$text" -le $((sec + 5)) ]
check $? "the text's realtime seconds ($text) agree with JSON's ($sec)"

finish
