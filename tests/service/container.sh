#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# A client in a container: its own mount and PID namespaces (unshare), the
# daemon's directory (page and control socket) bind-mounted in at another
# path. It reads the page and arms timers, before and after the daemon
# restarts on the same page. The socket file alone bind-mounted does not
# survive a restart (the new daemon binds a new socket: the mount still
# shows the old one, ECONNREFUSED), which is why the README says to
# bind-mount the directory. Needs root (mount namespaces) and unshare.
. "$top_srcdir/tests/service/lib.sh"
DEADLINE_S=60
EXAMPLE=$top_builddir/examples/libevent-timers

[ "$(id -u)" -eq 0 ] || skip_all "mount namespaces need root"
command -v unshare >/dev/null 2>&1 || skip_all "unshare (util-linux) is not installed"
unshare --mount --pid --fork true 2>/dev/null || skip_all "unshare --mount --pid is not permitted here"
[ -x "$EXAMPLE" ] || bail "$EXAMPLE is not built"

run=$tmp/run
mkdir -p "$run" "$tmp/ns-run"
: >"$tmp/ns-sock"
start() {
	"$CLOCKD" -o page="$run/page" 2>>"$tmp/clockd.log" &
	dpid=$!
	pids="$pids $dpid"
	poll "$DEADLINE_S" test -S "$run/control"
}
start || { diag_file "$tmp/clockd.log"; bail "clockd did not start"; }

# The container: waits for "$tmp/go.N" before its step N, writes
# "$tmp/done.N" with its results. Inside, the page is at $tmp/ns-run/page
# and the socket beside it; the host's pids are not visible.
cat >"$tmp/inside.sh" <<INSIDE
set -u
mount --make-rprivate / 2>/dev/null
mount --bind "$run" "$tmp/ns-run" || exit 1
mount --bind "$run/control" "$tmp/ns-sock" || exit 1
export CLOCKD_SHM="$tmp/ns-run/page"
unset CLOCKD_SOCKET
step() {
	n=\$1
	i=0
	until [ -e "$tmp/go.\$n" ] || [ \$i -ge 600 ]; do sleep 0.1; i=\$((i + 1)); done
	{
		echo "pid \$\$"
		"$CLOCKCTL" status >/dev/null 2>&1; echo "status \$?"
		"$EXAMPLE" 50 >/dev/null 2>&1; echo "timers \$?"
		"$CLOCKCTL" timers --socket "$tmp/ns-sock" >/dev/null 2>&1; echo "filesock \$?"
		kill -0 $dpid 2>/dev/null; echo "seedaemon \$?"
	} >"$tmp/done.\$n.tmp"
	mv "$tmp/done.\$n.tmp" "$tmp/done.\$n"
}
step 1
step 2
INSIDE
unshare --mount --pid --fork --mount-proc sh "$tmp/inside.sh" 2>"$tmp/inside.err" &
ns=$!
pids="$pids $ns"

: >"$tmp/go.1"
poll "$DEADLINE_S" test -e "$tmp/done.1"
ok $? "the container answered"
v() { sed -n "s/^$2 //p" "$tmp/done.$1"; }
[ "$(v 1 pid)" = 1 ] && [ "$(v 1 seedaemon)" -ne 0 ]
ok $? "it runs in its own PID namespace (its shell is pid $(v 1 pid); the daemon's pid is not visible)"
[ "$(v 1 status)" = 0 ]
ok $? "in it, clockctl status reads the bind-mounted page (exit $(v 1 status))"
[ "$(v 1 timers)" = 0 ]
ok $? "in it, a libclockd program arms timers through the socket beside the page and sees 50 expiries"
[ "$(v 1 filesock)" = 0 ]
ok $? "the socket file bind-mounted alone works too, until a restart"

# The daemon restarts on the same page.
kill -TERM "$dpid"
wait "$dpid"
rm -f "$run/control" 2>/dev/null
start || { diag_file "$tmp/clockd.log"; bail "clockd did not start again"; }
: >"$tmp/go.2"
poll "$DEADLINE_S" test -e "$tmp/done.2"
ok $? "the container answered after the restart"
[ "$(v 2 status)" = 0 ] && [ "$(v 2 timers)" = 0 ]
ok $? "after the restart: the page reads and timers run through the bind-mounted directory"
[ "$(v 2 filesock)" -ne 0 ]
ok $? "the socket file alone, bind-mounted before the restart, no longer connects (exit $(v 2 filesock))"
wait "$ns"
[ $tap_failed -eq 0 ] || diag_file "$tmp/inside.err" "$tmp/clockd.log"
finish
