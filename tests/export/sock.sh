#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The chrony SOCK sender without chronyd: clockd started before the socket
# exists keeps running and says so once; a receiver that appears later gets
# 40-byte samples with the magic, as chronyd would; when the receiver goes,
# clockd keeps running and sends again to the next one.
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

finish
