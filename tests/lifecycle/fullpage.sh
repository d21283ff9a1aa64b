#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# A full page directory (issue #26 item 8): the daemon reserves the
# page's blocks before it maps the file, so a tmpfs with no room left is
# one clear error and exit status 1, not a SIGBUS at the first store
# through the map; and no page.XXXXXXXX temporary is left behind, however
# many times it is tried. Root: it mounts a 4 KiB tmpfs.
. "$top_srcdir/tests/daemon/common.sh"

if [ "$(id -u)" -ne 0 ]; then
	echo "1..0 # SKIP needs root to mount a tiny tmpfs"
	exit 0
fi
mkdir "$T/full"
if ! mount -t tmpfs -o size=4k,mode=0755 clockd-test "$T/full" 2>"$T/mount.err"; then
	echo "1..0 # SKIP cannot mount a tmpfs here: $(cat "$T/mount.err")"
	exit 0
fi
umount_full() {
	umount "$T/full" 2>/dev/null
	cleanup
}
trap umount_full EXIT
# Fill it: whatever the tmpfs rounds 4k to, nothing is left.
dd if=/dev/zero of="$T/full/filler" bs=4096 count=64 2>/dev/null
: # (dd fails once it is full: that is the point)

fails=0 sigs=0
for i in 1 2 3; do
	timeout 30 "$CLOCKD" -o page="$T/full/page" -o control_socket="$T/sock" >"$T/run-$i.log" 2>&1
	rc=$?
	[ "$rc" -eq 1 ] || fails=$((fails + 1))
	[ "$rc" -gt 128 ] && sigs=$((sigs + 1))
done
[ "$fails" -eq 0 ]
ok $? "3 starts on a full page directory each exit with status 1 ($fails did not, $sigs by a signal)"
[ "$fails" -eq 0 ] || show_log "$T/run-1.log"
grep -q "$T/full/page: cannot reserve the page's .* bytes in its directory: No space left on device" "$T/run-1.log"
ok $? "the error names the page and says there is no space"
[ "$fails" -eq 0 ] || show_log "$T/run-1.log"
left=$(cd "$T/full" && ls -A | grep -v '^filler$' | tr '\n' ' ')
[ -z "$left" ]
ok $? "nothing is left in the directory (found: ${left:-nothing})"

# Room again: the same directory serves.
rm -f "$T/full/filler"
CLOCKD_SHM=$T/full/page
start_daemon "$T/ok.log" -o control_socket="$T/sock"
ok $? "with room again the daemon starts on it"
stop_daemon TERM
finish
