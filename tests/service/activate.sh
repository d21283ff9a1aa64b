#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Socket activation with systemd's own tool (no PID 1):
# systemd-socket-activate --seqpacket listens at the control socket's path
# and starts clockd on the first connection, passing the socket
# (sd_listen_fds). clockd serves that socket (clockctl timers answers on
# it), says so, never binds nor removes the path itself; a passed fd that
# is not a listening SOCK_SEQPACKET socket is refused at start.
. "$top_srcdir/tests/service/lib.sh"

command -v systemd-socket-activate >/dev/null 2>&1 ||
	skip_all "systemd-socket-activate is not installed (Debian: package systemd)"
systemd-socket-activate --help 2>&1 | grep -q -e '--seqpacket' ||
	skip_all "this systemd-socket-activate has no --seqpacket"

sock=$tmp/control
systemd-socket-activate -l "$sock" --seqpacket -E CLOCKD_SHM="$tmp/page" \
	"$CLOCKD" -o page="$tmp/page" -o control_socket="$sock" 2>"$tmp/a.log" &
apid=$!
pids="$pids $apid"
poll "$DEADLINE_S" test -S "$sock" || bail "systemd-socket-activate made no socket at $sock"

# The first connection starts clockd; its request waits in the socket's
# queue until clockd serves it, or times out: either way, poll after it.
"$CLOCKCTL" timers --socket "$sock" >/dev/null 2>&1
poll "$DEADLINE_S" page_live
ok $? "the first connection started clockd, its page is live"
"$CLOCKCTL" timers --socket "$sock" >"$tmp/timers" 2>"$tmp/err"
rc=$?
[ $rc -eq 0 ] && [ -s "$tmp/timers" ]
ok $? "clockctl timers is served on the passed socket (exit $rc)"
has "$tmp/a.log" "control: socket $sock passed by systemd"
ok $? "clockd says it serves the socket systemd passed"
! has "$tmp/a.log" 'control: listening on|stale socket'
ok $? "clockd did not bind a socket of its own"
daemon=$(CLOCKD_SHM=$tmp/page "$CLOCKCTL" --json status 2>/dev/null | sed -n 's/.*"pid": *\([0-9]*\).*/\1/p')
[ "$daemon" = "$apid" ]
ok $? "clockd is the activator's process, exec'd with the socket (pid ${daemon:-?} = $apid)"
kill -TERM "$apid"
wait "$apid"
rc=$?
[ $rc -eq 0 ]
ok $? "clockd stops on SIGTERM (exit $rc)"
test -S "$sock"
ok $? "the passed socket's path is left to its owner (not removed by clockd)"
[ $tap_failed -eq 0 ] || diag_file "$tmp/a.log" "$tmp/err"

# What systemd passes must be a listening SOCK_SEQPACKET socket: an fd 3
# that is a plain file (LISTEN_PID is the shell's pid, kept by exec) is
# refused at start.
rm -f "$tmp/page"
: >"$tmp/notasocket"
sh -c 'LISTEN_PID=$$ LISTEN_FDS=1 exec "$@" 3<"$0"' "$tmp/notasocket" \
	"$CLOCKD" -o page="$tmp/page" -o control_socket="$sock" 2>"$tmp/b.log"
rc=$?
[ $rc -eq 1 ] && has "$tmp/b.log" 'not a listening Unix SOCK_SEQPACKET socket'
ok $? "a passed fd that is not a SOCK_SEQPACKET listening socket is refused (exit $rc)"
[ $tap_failed -eq 0 ] || diag_file "$tmp/b.log"

finish
