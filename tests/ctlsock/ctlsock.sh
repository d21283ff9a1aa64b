#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The control socket against the real daemon, with a raw client
# (tests/ctlsock/rawclient: ctl_encode/ctl_decode and the rings, no
# libclockd timer API):
#  - HELLO: HELLO_ACK with 1 + 2 * ncpus descriptors, the memfd sealed and
#    of timer_shm_size;
#  - an ARM on the socket fires: a FIRE record in the delivery ring;
#  - a client that says it wakes by itself is not woken for a monotonic
#    record due after then, and is for one due sooner or a realtime one;
#  - malformed messages (every truncation of an ARM, garbage, a reply
#    type, oversized, before HELLO, a bad field) get an ERROR or a close,
#    and the daemon keeps serving;
#  - beyond the message-rate quota: EAGAIN, another client unaffected;
#  - max_clients + 1: EDQUOT;
#  - a client killed with 1000 timers pending: CPU_STATS shows 0 pending;
#  - clockd_timer_cpu_stats() and clockd_timer_client_stats() count the
#    bases and clients, keep the struct-size rule and fail as documented
#    (statsapi);
#  - clockctl timers shows the clients' SO_PEERCRED pid and uid, and its
#    --json parses;
#  - bad config values: one error naming the key.
# TAP; $top_srcdir and $top_builddir come from the test harness.

set -u
: "${top_srcdir:?}" "${top_builddir:?}"

RAW=$top_builddir/tests/ctlsock/rawclient
DEADLINE_S=10

. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/clockd.sh"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ctlsock.XXXXXX") || { echo "Bail out! mktemp"; exit 99; }
victim_pid=
cleanup() {
	[ -n "$victim_pid" ] && kill -KILL "$victim_pid" 2>/dev/null
	stop_daemon TERM
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM

# start_daemon NAME -o ...: a daemon on $tmp/NAME.page and $tmp/NAME.ctl,
# ready once clockctl timers answers on its socket. As root its tick thread
# runs at SCHED_FIFO (see tests/daemon/common.sh).
start_daemon() {
	name=$1
	shift
	prio= # SCHED_FIFO threads as root: the defaults (tests/daemon/common.sh)
	# shellcheck disable=SC2086 # $prio is empty or two words
	clockd_start "$tmp/$name.log" -o page="$tmp/$name.page" -o control_socket="$tmp/$name.ctl" -o hz=250 $prio "$@"
	export CLOCKD_SHM="$tmp/$name.page" CLOCKD_SOCKET="$tmp/$name.ctl"
	poll "$DEADLINE_S" eval '"$CLOCKCTL" timers >/dev/null 2>&1' && return 0
	show_log "$tmp/$name.log"
	bail "the daemon did not come up"
}

# raw DESCRIPTION ARGS...: one test from one rawclient run.
raw() {
	what=$1
	shift
	"$RAW" "$@" >"$tmp/raw.out" 2>&1
	ok $? "$what: $(tail -n 1 "$tmp/raw.out")"
	sed '$d' "$tmp/raw.out" | diag_file
}

# pending_total: the sum of pending timers over the CPUs (clockctl --json).
pending_total() {
	"$CLOCKCTL" timers --json 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(sum(c["pending_jiffies"] + c["pending_ns"] for c in d["cpus"]))' 2>/dev/null
}

# wait_pending N: until the daemon has N timers pending (deadline).
wait_pending() {
	i=0
	while [ $i -lt $((DEADLINE_S * 20)) ]; do
		[ "$(pending_total)" = "$1" ] && return 0
		sleep 0.05
		i=$((i + 1))
	done
	return 1
}

if ! command -v python3 >/dev/null 2>&1; then
	echo "1..0 # SKIP python3 is not installed (JSON checks)"
	exit 0
fi

# --- a daemon with room ---
# log_level debug: a client's departure is logged at debug level.
start_daemon a -o client_max_msgs_per_sec=100000 -o max_clients=16 -o log_level=debug -o timer_lead_other_ns=20000
raw "HELLO" hello
# A real-time client's lead is timer_lead_ns (30 us by default), a
# SCHED_OTHER one's timer_lead_other_ns (20 us here).
grep -q "client pid [0-9]* uid [0-9]* gid [0-9]*: HELLO, .* lead 20000 ns" "$tmp/a.log"
ok $? "a SCHED_OTHER client gets timer_lead_other_ns: $(grep -o 'HELLO, .*lead [0-9]* ns' "$tmp/a.log" | tail -n 1)"
if chrt -f 10 true 2>/dev/null; then
	chrt -f 10 "$RAW" hello >/dev/null 2>&1
	poll "$DEADLINE_S" grep -q "HELLO, .* lead 30000 ns" "$tmp/a.log"
	ok $? "a SCHED_FIFO client gets timer_lead_ns: $(grep -o 'HELLO, .*lead [0-9]* ns' "$tmp/a.log" | tail -n 1)"
else
	echo "# no SCHED_FIFO here: the real-time client's lead is not checked"
fi
raw "ARM on the socket" fire
raw "self-wake" selfwake
raw "malformed messages" malformed
kill -0 "$daemon_pid"
ok $? "the daemon survived them"

"$RAW" arm 1000 >"$tmp/victim.out" 2>&1 &
victim_pid=$!
i=0
while [ $i -lt $((DEADLINE_S * 20)) ] && ! grep -q armed "$tmp/victim.out"; do
	sleep 0.05
	i=$((i + 1))
done
wait_pending 1000
ok $? "a client armed 1000 timers: the daemon has 1000 pending"
"$CLOCKCTL" timers >"$tmp/timers.txt" 2>&1
awk -v p="$victim_pid" -v u="$(id -u)" '$1 == p && $2 == u && $3 == 1000 { found = 1 } END { exit !found }' \
	"$tmp/timers.txt"
ok $? "clockctl timers shows its pid $victim_pid, uid $(id -u) and 1000 pending"
diag_file <"$tmp/timers.txt"
"$top_builddir/tests/ctlsock/statsapi" "$victim_pid" 1000 >"$tmp/statsapi.out" 2>&1
ok $? "libclockd's timer statistics and names (tests/ctlsock/statsapi)"
diag_file <"$tmp/statsapi.out"
"$CLOCKCTL" timers --json >"$tmp/timers.json" 2>&1 && python3 -m json.tool "$tmp/timers.json" >/dev/null
ok $? "clockctl timers --json parses with python3 -m json.tool"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert any(c["pid"] == int(sys.argv[2]) and c["pending"] == 1000 for c in d["clients"])
assert all(k in c for c in d["cpus"] for k in ("cpu", "clients", "pending_jiffies", "pending_ns", "fired",
	"overruns", "next_expiry_ms", "late_p50_ns", "late_p99_ns", "late_max_ns"))
' "$tmp/timers.json" "$victim_pid"
ok $? "--json: the client with its pid and 1000 pending, every per-CPU field"
kill -KILL "$victim_pid"
wait "$victim_pid" 2>/dev/null
victim_pid=
wait_pending 0
ok $? "the client killed (SIGKILL): 0 pending within ${DEADLINE_S} s"
grep -q "client pid .* gone" "$tmp/a.log"
ok $? "one log line (debug) for its departure"
stop_daemon
ok $? "SIGTERM: the daemon stops cleanly"
[ ! -e "$tmp/a.ctl" ]
ok $? "and removes its socket"

# --- RESERVE (issue 26): timer ids set aside at timer_create ---
start_daemon r -o max_timers_per_user=10 -o client_max_timers=8
raw "RESERVE" reserve
stop_daemon
ok $? "the daemon of RESERVE stops cleanly"

# --- a daemon with tight quotas ---
start_daemon b -o client_max_msgs_per_sec=20 -o max_clients=3
raw "message rate quota" rate
raw "max_clients 3" maxclients 3
stop_daemon
ok $? "the daemon with tight quotas stops cleanly"

# --- the socket path: a path the daemon may not take is a start error
# naming it (nothing at the path is touched); a stale socket is replaced;
# the default is the file "control" beside the page ---
# refused NAME PATH: a daemon told to serve PATH exits 1 saying why.
refused() {
	"$CLOCKD" -o page="$tmp/$1.page" -o control_socket="$2" 2>"$tmp/$1.log"
	rc=$?
	grep control_socket "$tmp/$1.log" | diag_file
	[ $rc -eq 1 ] && grep -q "control socket $2: cannot serve it" "$tmp/$1.log"
}
: >"$tmp/file.ctl"
refused c "$tmp/file.ctl" && grep -q "not a socket" "$tmp/c.log" && [ -f "$tmp/file.ctl" ] &&
	[ ! -s "$tmp/file.ctl" ]
ok $? "a regular file at control_socket: left alone, the daemon does not start"
python3 -c 'import socket, sys; s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET); s.bind(sys.argv[1])' \
	"$tmp/stale.ctl"
start_daemon stale
grep -q "removed the stale socket" "$tmp/stale.log"
ok $? "a stale socket (nobody answers) is replaced"
refused d "$tmp/stale.ctl" && grep -q "another daemon answers" "$tmp/d.log"
ok $? "a socket another daemon answers on: left alone, the second daemon does not start"
CLOCKD_SOCKET=$tmp/stale.ctl "$CLOCKCTL" timers >/dev/null
ok $? "the first daemon still answers on it"
stop_daemon
mkdir "$tmp/inst"
"$CLOCKD" -o page="$tmp/inst/page" -o hz=100 2>"$tmp/inst.log" &
pid=$!
i=0
# The socket, and a live page: clockctl timers asks the socket only then.
while [ $i -lt $((DEADLINE_S * 20)) ] && { [ ! -S "$tmp/inst/control" ] ||
	! CLOCKD_SHM=$tmp/inst/page "$CLOCKCTL" status >/dev/null 2>&1; }; do
	sleep 0.05
	i=$((i + 1))
done
CLOCKD_SOCKET= CLOCKD_SHM=$tmp/inst/page "$CLOCKCTL" timers >/dev/null
ok $? "no control_socket: the daemon serves \"control\" beside its page, where clockctl looks"
kill -TERM $pid
wait $pid

# --- bad configuration: one clear error naming the key ---
for kv in timer_cpus=99 timer_ring_slots=100 control_socket=relative/ctl timer_cpus=1-0 timer_priority=100; do
	key=${kv%%=*}
	"$CLOCKD" -o page="$tmp/e.page" -o "$kv" --check-config >/dev/null 2>"$tmp/e.log"
	rc=$?
	[ $rc -ne 0 ] && grep -q "^clockd: -o $kv: $key: " "$tmp/e.log"
	ok $? "-o $kv: refused, naming $key: $(head -n 1 "$tmp/e.log")"
done
cpus=$(getconf _NPROCESSORS_ONLN)
out=$((cpus < 63 ? cpus : 62))
if command -v taskset >/dev/null 2>&1; then
	taskset -c 0 "$CLOCKD" -o page="$tmp/f.page" -o control_socket="$tmp/f.ctl" -o timer_cpus=0,$out \
		2>"$tmp/f.log"
	rc=$?
	[ $rc -ne 0 ] && grep -q "timer_cpus: CPU $out outside the daemon's CPU affinity" "$tmp/f.log"
	ok $? "timer_cpus naming CPU $out outside the affinity (taskset -c 0): start error naming it"
	diag_file <"$tmp/f.log"
else
	skip "taskset is not available"
fi

finish
