#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Path hygiene (issue #16 item 1), as root against user nobody:
#  - a page or socket directory that nobody owns, or that group or others
#    may write without the sticky bit, is refused with one line naming the
#    directory, its owner and its mode; a sticky one (as /tmp) is used;
#  - a symlink race: in a sticky world-writable directory nobody plants
#    and removes, in a loop, a link named as the control socket (and the
#    page) pointing at a victim file, while root starts the daemon again
#    and again (PATHS_STARTS, 40; STRESS_LONG=1: 200); the victim's owner,
#    group and mode never change (they did: chown and chmod after bind
#    followed the link), and every start either serves or refuses.
set -u
. "$top_srcdir/tests/stress/lib.sh"
need_root_and_nobody "it runs the daemon as root and the attacker as nobody"
private_dir paths
chmod 755 "$T"
starts=${PATHS_STARTS:-40}
[ "${STRESS_LONG:-0}" = 1 ] && starts=200

# refused NAME PATTERN ARGS...: clockd with ARGS exits 1 and its log
# ($T/NAME.log) has PATTERN.
refused() {
	name=$1 pat=$2
	shift 2
	timeout 20 "$CLOCKD" "$@" 2>"$T/$name.log"
	rc=$?
	sed 's/^/# clockd: /' "$T/$name.log" | grep -i "refus\|directory"
	[ "$rc" -eq 1 ] && grep -q -- "$pat" "$T/$name.log"
}

mkdir "$T/foreign" && chown nobody "$T/foreign"
refused foreign-page "page: directory $T/foreign has owner uid $NOBODY_UID and mode 0755.*refusing it" \
	-o page="$T/foreign/page"
ok $? "a page directory nobody owns is refused, naming it, its owner and its mode"
refused foreign-sub "page: directory $T/foreign has owner uid $NOBODY_UID" -o page="$T/foreign/clockd/page"
ok $? "... and so is a directory below it (every directory up to / is checked)"
[ ! -e "$T/foreign/page" ] && [ ! -e "$T/foreign/clockd" ]
ok $? "... and nothing was made in it"
mkdir "$T/priv"
refused foreign-sock "control_socket: directory $T/foreign has owner uid $NOBODY_UID and mode 0755" \
	-o page="$T/priv/page" -o control_socket="$T/foreign/control"
ok $? "a control socket directory nobody owns is refused"
mkdir "$T/gw" && chmod 0775 "$T/gw"
refused group-writable "page: directory $T/gw has owner uid 0 and mode 0775" -o page="$T/gw/page"
ok $? "a group-writable page directory without the sticky bit is refused"
mkdir "$T/ow" && chmod 0757 "$T/ow"
refused other-writable "control_socket: directory $T/ow has owner uid 0 and mode 0757" \
	-o page="$T/priv/page" -o control_socket="$T/ow/control"
ok $? "an other-writable socket directory without the sticky bit is refused"
ln -s "$T/foreign" "$T/link"
refused via-link "page: directory $T/foreign has owner uid $NOBODY_UID" -o page="$T/link/page"
ok $? "a link to a foreign directory is resolved and refused"

# The race. $T/pub is as /tmp: root's, world-writable, sticky.
mkdir "$T/pub" && chmod 1777 "$T/pub"
: >"$T/victim" && chmod 600 "$T/victim"
victim_was=$(stat -c '%u:%g %a' "$T/victim")
# The loop is the background job itself (exec: $hold is its pid), holds
# none of the test's output (the TAP driver waits for that to close), and
# ends once $T/stop or $T/pub is gone, whatever kills this test: it once
# outlived the test, planting links faster than the cleanup's rm -rf could
# empty $T/pub, and held the driver's pipe for ever.
hold=
cleanup_more() {
	: >"$T/stop"
	[ -z "$hold" ] || { kill "$hold" 2>/dev/null; wait "$hold" 2>/dev/null; }
}
(exec setpriv --reuid="$NOBODY_UID" --regid="$NOBODY_GID" --clear-groups sh -c "
	while [ -d '$T/pub' ] && [ ! -e '$T/stop' ]; do
		ln -s '$T/victim' '$T/pub/control' 2>/dev/null; ln -s '$T/victim' '$T/pub/page' 2>/dev/null
		rm -f '$T/pub/control' '$T/pub/page' 2>/dev/null
	done") </dev/null >/dev/null 2>&1 &
hold=$!
served=0 refusals=0 other=0 turned=0 i=0
while [ $i -lt "$starts" ]; do
	i=$((i + 1))
	# A log of its own: the shell truncates it in the child, after the
	# fork, and the loop below must not read the last start's log.
	log=$T/race-$i.log
	"$CLOCKD" -o page="$T/pub/page" -o socket_group="$NOBODY_GID" 2>"$log" &
	pid=$!
	# Up to 30 s for it to serve or refuse (a loaded CI machine runs
	# distcheck's suite beside this).
	j=0
	while kill -0 "$pid" 2>/dev/null && ! grep -q "control socket $T/pub/control" "$log" &&
		[ $j -lt 600 ]; do
		sleep 0.05
		j=$((j + 1))
	done
	late=
	kill -0 "$pid" 2>/dev/null && [ $j -ge 600 ] && late=" (neither served nor refused in 30 s)"
	kill "$pid" 2>/dev/null
	wait "$pid"
	rc=$?
	pid=
	if grep -q "control socket $T/pub/control" "$log"; then
		served=$((served + 1))
	elif [ $rc -eq 1 ] && grep -qi "refus\|symbolic link\|not a socket\|owned by uid" "$log"; then
		refusals=$((refusals + 1))
	else
		other=$((other + 1))
		echo "# start $i: exit status $rc$late, its log:"
		sed 's/^/# clockd: /' "$log"
	fi
	[ "$(stat -c '%u:%g %a' "$T/victim")" = "$victim_was" ] || turned=$((turned + 1))
	# The daemon's own leftovers are root's: nobody cannot remove them.
	rm -f "$T/pub/control" "$T/pub/page"
done
: >"$T/stop"
kill "$hold" 2>/dev/null
wait "$hold" 2>/dev/null
hold=
echo "# $starts starts against the link loop: $served served, $refusals refused, $other otherwise"
[ "$turned" -eq 0 ] && [ "$(stat -c '%u:%g %a' "$T/victim")" = "$victim_was" ]
ok $? "the victim file kept owner, group and mode $victim_was through $starts starts ($turned changes)"
[ "$other" -eq 0 ] && [ $((served + refusals)) -eq "$starts" ]
ok $? "every start served or refused with a reason ($served served, $refusals refused)"
finish
