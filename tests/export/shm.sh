#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The NTP SHM segment: created 0600 by default, written with the mode-1
# count/valid protocol (read here by an independent copy of the layout),
# left in place at exit; an existing segment is reused when it matches,
# fixed when it is ours with other permissions, removed and created afresh
# when world-writable or someone else's (issue #16: a segment pre-created by
# user nobody, who stays attached), refused when of another size; a
# world-writable ntp_shm_mode is allowed with a warning.
. "$top_srcdir/tests/export/lib.sh"

# posix_clock monotonic: clockd's realtime then follows the kernel's to the
# ns, so the offset checks see the export's pairing, not the host's NTP.
run="-o source=posix -o posix_clock=monotonic -o tick=timerfd -o hz=100"
free_unit 80 119 || exit 99
key=$(shm_key "$unit")

# shellcheck disable=SC2086
start_daemon "$T/log1" $run -o ntp_shm_unit="$unit"
ok $? "clockd starts with ntp_shm_unit $unit"
st=$("$EXPTOOL" stat "$unit")
echo "# segment $key: $st"
[ "$st" = "mode 0600 size 96 uid $(id -u)" ]
ok $? "segment created with mode 0600 (the default), 96 bytes, ours"

s1=$("$EXPTOOL" read "$unit" 10)
ok $? "a valid mode-1 sample: count even and stable, usec = nsec / 1000"
echo "# $s1"
c1=$(echo "$s1" | awk '{ print $2 }')
poll 10 sh -c "c=\$(\"$EXPTOOL\" read $unit 10 | awk '{ print \$2 }'); [ \"\$c\" -gt $c1 ]"
ok $? "samples keep coming (count grows by 2 per sample, from $c1)"
echo "$s1" | awk '{ o = $8 < 0 ? -$8 : $8; exit !($4 == 0 && $6 == -7 && o < 1000000) }'
ok $? "leap 0 (in sync), precision -7 (HZ 100), clock - receive below 1 ms"

stop_daemon TERM
"$EXPTOOL" stat "$unit" >/dev/null
ok $? "the segment stays after clockd exits (a reader may be attached)"

# shellcheck disable=SC2086
start_daemon "$T/log2" $run -o ntp_shm_unit="$unit"
ok $? "a restarted clockd reuses its segment"
stop_daemon TERM

ipcrm -M "$key"
"$EXPTOOL" create "$unit" 0644
# shellcheck disable=SC2086
start_daemon "$T/log3" $run -o ntp_shm_unit="$unit" &&
	grep -q "permissions of the existing segment changed from 0644 to 0600" "$T/log3" &&
	[ "$("$EXPTOOL" stat "$unit")" = "mode 0600 size 96 uid $(id -u)" ]
ok $? "an existing segment of ours with 0644 is set to 0600, and said so"
stop_daemon TERM

ipcrm -M "$key"
"$EXPTOOL" create "$unit" 0666
# shellcheck disable=SC2086
start_daemon "$T/log4" $run -o ntp_shm_unit="$unit" &&
	grep -q "world-writable (0666, ntp_shm_mode is 0600.*removed and created afresh" "$T/log4"
ok $? "an existing world-writable segment is removed and created afresh, and said so"
[ "$("$EXPTOOL" stat "$unit")" = "mode 0600 size 96 uid $(id -u)" ]
ok $? "... the new one 0600 and ours"
stop_daemon TERM

ipcrm -M "$key"
"$EXPTOOL" create "$unit" 0600 64
# shellcheck disable=SC2086
clockd_fails "$T/log5" "existing segment has 64 bytes, not 96" $run -o ntp_shm_unit="$unit"
ok $? "an existing segment of 64 bytes is refused: exit 1, said why"

ipcrm -M "$key"
if [ "$(id -u)" -eq 0 ]; then
	"$EXPTOOL" create "$unit" 0640 && "$EXPTOOL" chown "$unit" 65534
	# shellcheck disable=SC2086
	start_daemon "$T/log6" $run -o ntp_shm_unit="$unit" &&
		grep -q "owner uid 65534, creator uid 0 and permissions 0640.*removed and created afresh" \
			"$T/log6" &&
		[ "$("$EXPTOOL" stat "$unit")" = "mode 0600 size 96 uid 0" ]
	ok $? "a segment given to another owner is removed and created afresh, and said so"
	stop_daemon TERM
	ipcrm -M "$key"
else
	skip "giving a segment to another owner needs root"
fi

# The attack: user nobody pre-creates the segment with the configured mode,
# attaches and stays (a holder process), hoping to write what chronyd reads.
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null 2>&1 && id nobody >/dev/null 2>&1; then
	nobody="setpriv --reuid=$(id -u nobody) --regid=$(id -g nobody) --clear-groups"
	$nobody "$EXPTOOL" create "$unit" 0600
	[ "$("$EXPTOOL" stat "$unit")" = "mode 0600 size 96 uid $(id -u nobody)" ]
	ok $? "user nobody pre-created the segment with mode 0600"
	$nobody "$EXPTOOL" hold "$unit" 600 &
	holder=$!
	# shellcheck disable=SC2086
	start_daemon "$T/log6b" $run -o ntp_shm_unit="$unit" &&
		grep -q "key $key: the existing segment has owner uid $(id -u nobody), creator uid $(id -u nobody) and permissions 0600 ([01] attached).*removed and created afresh" \
			"$T/log6b"
	ok $? "clockd refuses nobody's segment: one line naming key, owner, creator and mode"
	[ "$("$EXPTOOL" stat "$unit")" = "mode 0600 size 96 uid 0" ] &&
		! $nobody "$EXPTOOL" stat "$unit" >/dev/null 2>&1
	ok $? "the key now names a fresh root 0600 segment nobody cannot attach"
	"$EXPTOOL" read "$unit" 10 >/dev/null
	ok $? "... and clockd writes its samples there"
	kill "$holder" 2>/dev/null
	wait "$holder" 2>/dev/null
	stop_daemon TERM
	ipcrm -M "$key"
else
	for i in 1 2 3 4; do
		skip "a segment of user nobody needs root and setpriv"
	done
fi

# shellcheck disable=SC2086
start_daemon "$T/log7" $run -o ntp_shm_unit="$unit" -o ntp_shm_mode=0666 &&
	grep -q "world-writable (ntp_shm_mode 0666): any local user can feed time" "$T/log7" &&
	[ "$("$EXPTOOL" stat "$unit")" = "mode 0666 size 96 uid $(id -u)" ]
ok $? "ntp_shm_mode 0666 as configured: allowed, created so, with a warning"
stop_daemon TERM

# shellcheck disable=SC2086
start_daemon "$T/log8" $run -o ntp_shm_unit="$unit" -o ntp_shm_mode=0666
ok $? "... and a restart with the same mode reuses it"
stop_daemon TERM

finish
