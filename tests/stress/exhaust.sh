#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Resource exhaustion (issue #8, part 6). (1) clockd with few descriptors
# (RLIMIT_NOFILE 64, through prlimit) and 200 connections held open on its
# control socket: the clients beyond what it can take get errors (the
# connect fails or the daemon closes them), the daemon stays alive and keeps
# its page live, and once the flood lets go it serves new clients again.
# Its CPU time while flooded is shown (a daemon spinning on a failing
# accept() would burn a whole CPU). (2) A page directory on a tmpfs too
# small for the page: clockd refuses to start with a clear error (needs
# root to mount; skipped otherwise).
set -u
. "$top_srcdir/tests/stress/lib.sh"
private_dir exhaust
cleanup_more() { mountpoint -q "$T/tiny" 2>/dev/null && umount "$T/tiny"; }

ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }

prlimit --nofile=64 "$CLOCKD" -o page="$T/page" -o max_clients=4096 -o max_clients_per_user=4096 2>"$T/log" &
pid=$!
if ! serving; then
	ok 1 "clockd starts with RLIMIT_NOFILE 64"
	finish
fi
mkfifo "$T/fifo"
# Counted once at most 64 are held (at most 10 s): the daemon may take
# its queue of connections late (loaded, or pausing while it has no
# descriptor to spare).
"$HOLD" "$T/control" 200 64 <"$T/fifo" >"$T/held" &
hold=$!
exec 3>"$T/fifo"
i=0
while [ ! -s "$T/held" ] && [ $i -lt 150 ]; do sleep 0.1; i=$((i + 1)); done
echo "# holdconn: $(cat "$T/held")"
t0=$(ticks)
sleep 2
t1=$(ticks)
echo "# daemon CPU time during 2 s of the flood: $(( (t1 - t0) * 10 )) ms; accept errors logged: $(grep -c 'accept' "$T/log")"
kill -0 "$pid" 2>/dev/null
ok $? "clockd survives 200 held connections with 64 descriptors"
live
ok $? "its page stays live"
# With 64 descriptors it holds fewer than 64 clients: of the 200, at least
# 136 fail, refused at connect (its backlog full) or closed by the daemon
# once accepted (on its spare descriptor), in a proportion that depends on
# how fast it accepts.
read -r _ conn _ refused _ _ _ closed <"$T/held"
[ $((${refused:-0} + ${closed:-0})) -ge 136 ]
ok $? "connections beyond its descriptors fail: ${refused:-?} refused at connect, ${closed:-?} closed by clockd (want 136 or more of 200)"
# A daemon out of descriptors must not spin on the listening socket: the
# pending connection keeps it readable, and accept() keeps failing with
# EMFILE. It gives up its spare descriptor to take each waiting client and
# refuse it with EAGAIN (or, with no spare, stops listening until a
# descriptor is free or a second has passed), and says so once.
errs=$(grep -c 'control: accept' "$T/log")
said=$(grep -c -e 'control: out of descriptors' -e 'control: cannot accept connections' "$T/log")
[ "$errs" -eq 0 ] && [ "$said" -eq 1 ]
ok $? "out of descriptors, clockd refuses (or pauses) and says so once ($said lines; $errs accept errors logged)"
exec 3>&-
wait "$hold"
hold=
i=0
while ! "$CLOCKCTL" timers >/dev/null 2>&1 && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
"$CLOCKCTL" timers >/dev/null 2>&1
ok $? "after the flood, a new client is served (clockctl timers)"
kill "$pid"; wait "$pid" 2>/dev/null; pid=

# A page directory with no room.
if [ "$(id -u)" -ne 0 ] || ! mkdir "$T/tiny" || ! mount -t tmpfs -o size=4k,nr_inodes=2 tmpfs "$T/tiny" 2>/dev/null; then
	skip "cannot mount a tmpfs here (needs root and mount rights)"
else
	head -c 4096 /dev/zero >"$T/tiny/filler" 2>/dev/null
	"$CLOCKD" -o page="$T/tiny/page" 2>"$T/log.tiny" &
	p=$!
	i=0
	while kill -0 "$p" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	if kill -0 "$p" 2>/dev/null; then kill -9 "$p"; fi
	wait "$p"
	st=$?
	sed 's/^/# clockd: /' "$T/log.tiny" | head -n 3
	[ $st -ne 0 ] && [ $st -ne 137 ] && grep -q "$T/tiny/page" "$T/log.tiny"
	ok $? "a full page directory: clockd exits with an error naming the page (status $st)"
fi
finish
