#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# One user cannot keep the others out (max_clients_per_user). As root, a
# daemon with max_clients 8 and max_clients_per_user 3; nobody (through
# setpriv) connects 6 times and holds on: 3 are served, 3 get EDQUOT and a
# close; nobody's next client is refused too, while root's are served,
# root being a user like any other (3 of its 6 held); a third user gets
# the 2 places left of max_clients; the refusals are logged once for each
# limit; once nobody lets go, nobody is served again.
set -u
. "$top_srcdir/tests/stress/lib.sh"
need_root_and_nobody "it runs a daemon as root and clients as nobody"
private_dir peruser
chmod 755 "$T"

# The socket's group is nobody's, so that nobody may connect (0660).
"$CLOCKD" -o page="$T/page" -o max_clients=8 -o max_clients_per_user=3 \
	-o socket_group="$NOBODY_GID" 2>"$T/log" &
pid=$!
if ! serving; then
	ok 1 "clockd starts with max_clients_per_user 3"
	finish
fi

# hold NAME COUNT HELD [PREFIX...]: holdconn (run by PREFIX) in the
# background, its pid in $h, its report in $T/NAME once at most HELD of
# its connections are open (at most 10 s: the daemon may answer late on a
# loaded machine) and 300 ms more, so that one closed beyond HELD shows
hold() {
	hold_name=$1 hold_count=$2 hold_held=$3
	shift 3
	mkfifo "$T/$hold_name.fifo"
	"$@" "$HOLD" "$T/control" "$hold_count" "$hold_held" <"$T/$hold_name.fifo" >"$T/$hold_name" &
	h=$!
	exec 3>"$T/$hold_name.fifo"
	i=0
	while [ ! -s "$T/$hold_name" ] && [ $i -lt 150 ]; do sleep 0.1; i=$((i + 1)); done
	echo "# holdconn $hold_name: $(cat "$T/$hold_name")"
}

hold nobody 6 3 as_nobody
hold=$h
exec 4>&3 3>&-
read -r _ conn _ _ _ _ _ closed <"$T/nobody"
[ "${conn:-0}" -eq 6 ] && [ "${closed:-0}" -eq 3 ]
ok $? "nobody's 6 connections: 3 kept, 3 answered and closed (connected ${conn:-?}, closed ${closed:-?})"
out=$(as_nobody "$CLOCKCTL" timers 2>&1)
st=$?
echo "$out" | sed 's/^/# clockctl as nobody: /'
[ $st -ne 0 ] && echo "$out" | grep -q "too many clients of uid $NOBODY_UID"
ok $? "nobody's next client is refused, and told why (status $st)"
"$CLOCKCTL" timers >/dev/null 2>&1
ok $? "root's client is still served"
hold root 6 3
hold2=$h
exec 5>&3 3>&-
read -r _ conn _ _ _ _ _ closed <"$T/root"
[ "${conn:-0}" -eq 6 ] && [ "${closed:-0}" -eq 3 ]
ok $? "root's 6 connections: 3 kept, 3 closed, as any user's (connected ${conn:-?}, closed ${closed:-?})"
# A user with no name, in nobody's group for the socket.
hold third 6 2 setpriv --reuid=54321 --regid="$NOBODY_GID" --clear-groups
read -r _ conn _ _ _ _ _ closed <"$T/third"
[ "${conn:-0}" -eq 6 ] && [ "${closed:-0}" -eq 4 ]
ok $? "a third user gets the 2 places left of max_clients 8 (connected ${conn:-?}, closed ${closed:-?})"
exec 3>&- 5>&-
wait "$hold2" "$h"
hold2=
grep 'refused' "$T/log" | sed 's/^/# clockd: /'
lines=$(grep -c "refused: 3 clients of that user already (max_clients_per_user)" "$T/log")
[ "$lines" -eq 1 ] && grep -q "control: pid [0-9]* uid $NOBODY_UID refused: 3 clients of that user already" "$T/log"
ok $? "the refusals beyond max_clients_per_user are logged once, naming the uid ($lines lines)"
lines=$(grep -c "uid 54321 refused: 8 clients already (max_clients)" "$T/log")
[ "$lines" -eq 1 ]
ok $? "those beyond max_clients once too ($lines lines)"
exec 4>&-
wait "$hold"
hold=
i=0
while ! as_nobody "$CLOCKCTL" timers >/dev/null 2>&1 && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
as_nobody "$CLOCKCTL" timers >/dev/null 2>&1
ok $? "once nobody lets go, nobody is served again"
kill "$pid"
wait "$pid"
ok $? "the daemon exits 0 on SIGTERM"
pid=
finish
