#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# CLIENT_STATS (clockctl timers) is not every user's business (issue #16
# item 5): a client sees the timer clients of its own uid, unless it is
# root or in stats_group. As root, a daemon whose socket group is nobody's
# and whose stats_group is a group of no name (54330); timer clients of
# root (1), nobody (2) and uid 54321 (1) hold on, and each asks.
set -u
. "$top_srcdir/tests/stress/lib.sh"
need_root_and_nobody "it runs a daemon as root and clients as other users"
HOSTILE=$top_builddir/tests/stress/hostile
ADMIN_GID=54330
private_dir clientstats
chmod 755 "$T"

"$CLOCKD" -o page="$T/page" -o socket_group="$NOBODY_GID" -o stats_group=$ADMIN_GID 2>"$T/log" &
pid=$!
if ! serving; then
	ok 1 "clockd starts with stats_group $ADMIN_GID"
	finish
fi

# Holders read the FIFO until its last writer (this shell, fd 3) closes it.
mkfifo "$T/hold"
exec 3<>"$T/hold"
holders=
cleanup_more() { exec 3>&-; for h in $holders; do kill "$h" 2>/dev/null; done; }
as_uid() { # as_uid UID GROUPS COMMAND...
	u=$1 g=$2
	shift 2
	setpriv --reuid="$u" --regid="$u" --groups="$g" "$@"
}
held=0
holder() { # holder NAME [setpriv prefix...]: a timer client holding on
	name=$1
	shift
	# (3>&-: a holder holding the FIFO open for writing would never see its end)
	"$@" "$HOSTILE" hello "$CLOCKD_SOCKET" <"$T/hold" >"$T/$name" 2>&1 3>&- &
	holders="$holders $!"
	held=$((held + 1))
}
holder root
holder nobody1 as_nobody
holder nobody2 as_nobody
holder third as_uid 54321 "$NOBODY_GID"
i=0
while [ "$(cat "$T"/root "$T"/nobody1 "$T"/nobody2 "$T"/third | grep -c '^hello$')" -lt 4 ] &&
	[ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
[ $i -lt 100 ]
ok $? "four timer clients hold on: root, nobody twice, uid 54321"

# uids USER...: the uids of the clients clockctl timers shows to the
# command, sorted, on one line
uids() {
	"$@" "$CLOCKCTL" --json timers 2>"$T/err" | jq -r '[.clients[].uid] | sort | map(tostring) | join(" ")'
}
got=$(uids as_nobody)
[ "$got" = "$NOBODY_UID $NOBODY_UID" ]
ok $? "nobody sees only nobody's clients ($got)"
got=$(uids as_uid 54321 "$NOBODY_GID")
[ "$got" = "54321" ]
ok $? "uid 54321 sees only its own client ($got)"
got=$(uids)
[ "$got" = "0 54321 $NOBODY_UID $NOBODY_UID" ] || [ "$got" = "0 $NOBODY_UID $NOBODY_UID 54321" ]
ok $? "root sees every client ($got)"
got=$(uids as_uid 54322 "$NOBODY_GID,$ADMIN_GID")
[ "$(echo "$got" | wc -w)" -eq 4 ]
ok $? "a member of stats_group (a supplementary group) sees every client ($got)"
got=$(uids setpriv --reuid=54323 --regid=$ADMIN_GID --groups="$NOBODY_GID")
[ "$(echo "$got" | wc -w)" -eq 4 ]
ok $? "... and so does one whose primary group it is ($got)"
finish
