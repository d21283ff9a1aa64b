#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The export keys are checked with the configuration, before anything is
# set up: a bad value stops clockd (exit 1) with the key named, from the
# command line and from a config file (with its line), and no segment is
# created.
. "$top_srcdir/tests/export/lib.sh"

free_unit 40 79 || exit 99

clockd_fails "$T/l1" "ntp_shm_mode: '0999' is not an octal file mode" \
	-o ntp_shm_unit="$unit" -o ntp_shm_mode=0999
ok $? "-o ntp_shm_mode=0999: exit 1, the key and the value named"

! "$EXPTOOL" stat "$unit" >/dev/null
ok $? "... and no segment was created"

clockd_fails "$T/l2" "chrony_sock: 'chrony.sock' is not an absolute path" -o chrony_sock=chrony.sock
ok $? "-o chrony_sock=chrony.sock (relative): exit 1, named"

clockd_fails "$T/l3" "ntp_shm_unit" -o ntp_shm_unit=256
ok $? "-o ntp_shm_unit=256 (beyond 255): exit 1, named"

printf 'ntp_shm_unit = %s\nntp_shm_mode = 0999\nchrony_sock = "run/chrony.sock"\n' "$unit" >"$T/bad.conf"
clockd_fails "$T/l4" "bad.conf:2: ntp_shm_mode" -c "$T/bad.conf" &&
	grep -q "bad.conf:3: chrony_sock" "$T/l4"
ok $? "config file: both bad keys reported with file and line, exit 1"

"$CLOCKD" -c "$T/bad.conf" --check-config >/dev/null 2>"$T/l5"
[ $? -eq 1 ] && grep -q "bad.conf:2: ntp_shm_mode" "$T/l5"
ok $? "--check-config rejects the same file"

finish
