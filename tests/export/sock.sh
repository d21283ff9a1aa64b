#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The chrony SOCK sender without chronyd: clockd started before the socket
# exists keeps running and says so once; a receiver that appears later gets
# 40-byte samples with the magic, as chronyd would; when the receiver goes,
# clockd keeps running and sends again to the next one. As root: a clockd
# that runs as a user cannot reconnect to a socket root made 0755 again
# (as a restarted chronyd makes it), and says so with the advice.
. "$top_srcdir/tests/export/lib.sh"

sock=$T/chrony.sock
start_daemon "$T/log" -o source=posix -o posix_clock=monotonic -o tick=timerfd -o chrony_sock="$sock"
ok $? "clockd starts with chrony_sock set and no socket there"
grep -q "chrony SOCK $sock: No such file or directory; is chronyd running" "$T/log"
ok $? "the missing socket is logged"

r=$("$EXPTOOL" recv "$sock" 10)
ok $? "a receiver started later gets a valid sample: $r"
echo "$r" | awk '{ o = $6 < 0 ? -$6 : $6; exit !($2 == 40 && $4 == 0 && o < 1000000) }'
ok $? "40 bytes, leap 0, offset below 1 ms"

r=$("$EXPTOOL" recv "$sock" 10)
ok $? "a second receiver at the same path (a restarted chronyd) gets samples: $r"
kill -0 "$daemon_pid"
ok $? "clockd still running"
[ "$(grep -c "No such file or directory; is chronyd running" "$T/log")" -le 2 ]
ok $? "the missing socket is logged once per change, not per sample"
sed 's/^/# clockd: /' "$T/log"
stop_daemon >/dev/null

# chronyd makes its socket as root with its umask (0755 root:root): a
# clockd that dropped to a user connected at start, still root, but cannot
# connect again once chronyd restarts, and says what to do instead.
if [ "$(id -u)" -ne 0 ] || ! id nobody >/dev/null 2>&1; then
	skip "needs root and user nobody to drop to (running as uid $(id -u))"
	skip "needs root and user nobody to drop to (running as uid $(id -u))"
else
	chmod 755 "$T" # the daemon, once nobody, reads its own page by path
	rsock=$T/root.sock
	"$EXPTOOL" recv "$rsock" 20 >"$T/recv1" 2>&1 &
	recv=$!
	poll 10 test -S "$rsock"
	start_daemon "$T/log2" -o user=nobody -o tick_priority=0 -o timer_priority=0 -o source=posix \
		-o posix_clock=monotonic -o tick=timerfd -o chrony_sock="$rsock"
	wait "$recv"
	ok $? "clockd started as root, then nobody, sends to it: $(cat "$T/recv1")"
	# chronyd restarts: a new socket, root's again.
	"$EXPTOOL" recv "$rsock" 20 >/dev/null 2>&1 &
	recv=$!
	advised() {
		grep -q "chrony SOCK $rsock: Permission denied; chronyd makes its SOCK writable by root only" \
			"$T/log2" && grep -q 'Use ntp_shm_unit' "$T/log2"
	}
	poll 20 advised
	ok $? "... but not to the next one root makes 0755: EACCES, with the advice (SHM)" \
		"$(grep 'chrony SOCK' "$T/log2" | tail -n 1)"
	kill "$recv" 2>/dev/null
	wait "$recv" 2>/dev/null
fi

finish
