#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Structured journal entries (events.h): with its stderr the journal's
# stream ($JOURNAL_STREAM names it, as systemd sets it), clockd sends its
# events through sd_journal_sendv() with MESSAGE_ID and CLOCKD_* fields.
# No journald runs here: in a private mount namespace a tmpfs covers /run
# and a receiver (python3) binds the journal's socket,
# /run/systemd/journal/socket, and keeps what arrives in the native
# protocol ("KEY=value" lines). The system reference's first lock is a
# state event: MESSAGE_ID 3922ec23..., CLOCKD_REFERENCE=system,
# CLOCKD_STATE=locked; ordinary lines still go to stderr, with "<N>"
# priority prefixes. make check-systemd sees the same entries in a real
# journal.
. "$top_srcdir/tests/daemon/common.sh"
[ "$(id -u)" -eq 0 ] || skip_all "needs root for a mount namespace (running as uid $(id -u))"
command -v python3 >/dev/null || skip_all "python3 is not installed (the journal socket's receiver)"
if [ -z "${CLOCKD_JOURNAL_NS:-}" ]; then
	CLOCKD_JOURNAL_NS=1 exec unshare -m sh "$0" "$@" ||
		skip_all "unshare -m failed: no private mount namespace here"
fi
mount --make-rprivate / && mount -t tmpfs -o mode=0755 clockd-journal /run && mkdir -p /run/systemd/journal ||
	skip_all "cannot mount a tmpfs on /run in the mount namespace"

python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind("/run/systemd/journal/socket")
s.settimeout(60)
open(sys.argv[1] + ".ready", "w").close()
with open(sys.argv[1], "ab", buffering=0) as f:
    while True:
        try:
            f.write(s.recv(65536) + b"\n")
        except socket.timeout:
            break
' "$T/journal" &
recv=$!
poll 10 test -e "$T/journal.ready"
ok $? "a receiver binds /run/systemd/journal/socket in the namespace"

: >"$T/log"
JOURNAL_STREAM=$(stat -c '%d:%i' "$T/log")
export JOURNAL_STREAM
"$CLOCKD" -o page="$CLOCKD_SHM" -o source=posix -o tick=timerfd -o hz=100 >>"$T/log" 2>&1 &
daemon_pid=$!
ID=3922ec23399449bda1c859bb20965944
# entry FIELD...: an entry of the journal with every FIELD line (KEY=value).
entry() {
	awk -v RS= -v want="$*" '{
		n = split(want, w, " "); hit = 1
		for (i = 1; i <= n; i++) if (index("\n" $0 "\n", "\n" w[i] "\n") == 0) hit = 0
		if (hit) { found = 1; exit }
	} END { exit !found }' "$T/journal"
}
poll 30 entry "MESSAGE_ID=$ID" CLOCKD_STATE=locked
ok $? "the system reference's lock reaches the journal with MESSAGE_ID=$ID and CLOCKD_STATE=locked"
entry "MESSAGE_ID=$ID" CLOCKD_REFERENCE=system CLOCKD_STATE_BEFORE=acquiring PRIORITY=5 SYSLOG_IDENTIFIER=clockd
ok $? "... with CLOCKD_REFERENCE, CLOCKD_STATE_BEFORE, PRIORITY 5 (notice) and SYSLOG_IDENTIFIER"
grep -q '^MESSAGE=reference system: acquiring -> locked (offset ' "$T/journal" &&
	grep -q '^CLOCKD_OFFSET_NS=-\{0,1\}[0-9]*$' "$T/journal" &&
	grep -q '^CLOCKD_FREQUENCY_PPM=-\{0,1\}[0-9]*\.[0-9]*$' "$T/journal"
ok $? "... its MESSAGE is the log line, its offset and frequency are numbers"
! grep -q 'acquiring -> locked' "$T/log" && grep -q '^<[0-7]>' "$T/log"
ok $? "the event is not also on stderr; the other lines are, with <N> prefixes"
stop_daemon
kill "$recv" 2>/dev/null
wait "$recv" 2>/dev/null
[ -s "$T/journal" ] && sed -n 's/^\(MESSAGE\|CLOCKD_[A-Z_]*\)=/# journal: &/p' "$T/journal" | head -n 12
finish
