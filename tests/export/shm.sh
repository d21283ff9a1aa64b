#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The NTP SHM segment: created 0600 by default, written with the mode-1
# count/valid protocol (read here by an independent copy of the layout),
# left in place at exit; an existing segment is reused when it matches,
# fixed when it is ours with other permissions, refused when world-writable,
# someone else's or of another size; a world-writable ntp_shm_mode is
# allowed with a warning.
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
clockd_fails "$T/log4" "world-writable (0666, ntp_shm_mode is 0600).*refused" $run -o ntp_shm_unit="$unit"
ok $? "an existing world-writable segment is refused: exit 1, said why"
[ "$("$EXPTOOL" stat "$unit")" = "mode 0666 size 96 uid $(id -u)" ]
ok $? "... and left as it was"

ipcrm -M "$key"
"$EXPTOOL" create "$unit" 0600 64
# shellcheck disable=SC2086
clockd_fails "$T/log5" "existing segment has 64 bytes, not 96" $run -o ntp_shm_unit="$unit"
ok $? "an existing segment of 64 bytes is refused: exit 1, said why"

ipcrm -M "$key"
if [ "$(id -u)" -eq 0 ]; then
	"$EXPTOOL" create "$unit" 0640 && "$EXPTOOL" chown "$unit" 65534
	# shellcheck disable=SC2086
	clockd_fails "$T/log6" "permissions 0640 and owner uid 65534.*not ours" $run -o ntp_shm_unit="$unit"
	ok $? "someone else's segment with 0640 is refused: exit 1, said why"
	ipcrm -M "$key"
else
	tap_n=$((tap_n + 1)); echo "ok $tap_n # SKIP giving a segment to another owner needs root"
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
