#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# clockd started with every signal blocked (the child of a parent that
# forked with them blocked, as libclockd holding its lock across fork()
# once left it) still stops on SIGTERM: it sets its own signal mask.
. "$top_srcdir/tests/daemon/common.sh"
command -v perl >/dev/null || skip_all "perl is not installed (it blocks the signals before exec)"
perl -MPOSIX -e 1 2>/dev/null || skip_all "perl has no POSIX module"

# perl -e "$block" COMMAND...: COMMAND with signals 1 to 31 blocked (perl
# itself, not a function: $! must be the daemon's pid, perl execs it).
block='use POSIX; sigprocmask(SIG_BLOCK, POSIX::SigSet->new(1 .. 31)) or die; exec @ARGV or die "exec: $!"'
perl -e "$block" grep -q '^SigBlk:.*7ffbfeff$' /proc/self/status
ok $? "the harness starts a program with every signal but KILL and STOP blocked"

perl -e "$block" "$CLOCKD" -o page="$CLOCKD_SHM" >"$T/log" 2>&1 &
daemon_pid=$!
poll 10 clockd_live "$CLOCKD_SHM"
ok $? "clockd started so goes live"
kill -TERM "$daemon_pid"
poll 10 eval '! kill -0 "$daemon_pid" 2>/dev/null'
st=$?
ok $st "... and stops on SIGTERM"
[ $st -eq 0 ] || show_log "$T/log"
finish
