# SPDX-License-Identifier: LGPL-2.1-or-later
# Shared by the export tests: tests/daemon/common.sh (private dir, daemon,
# TAP) plus NTP SHM segments and a chronyd, removed and killed on exit.
. "$top_srcdir/tests/daemon/common.sh"

EXPTOOL=$top_builddir/tests/export/exptool
[ -x "$EXPTOOL" ] || { echo "Bail out! $EXPTOOL not built"; exit 99; }
shm_units=
chronyd_pid=

export_cleanup() {
	if [ -n "$chronyd_pid" ]; then
		kill "$chronyd_pid" 2>/dev/null
		wait "$chronyd_pid" 2>/dev/null
	fi
	[ -z "$daemon_pid" ] || kill "$daemon_pid" 2>/dev/null
	for u in $shm_units; do
		ipcrm -M "$(shm_key "$u")" 2>/dev/null
	done
	cleanup
}
trap export_cleanup EXIT

shm_key() { printf '0x%08x' $((0x4e545030 + $1)); }

# free_unit FIRST LAST: set $unit to the first NTP SHM unit with no
# segment, and own it (removed on exit). Tests running in parallel use
# disjoint ranges. (Not in a $(...) subshell: shm_units must stay set.)
free_unit() {
	u=$1
	while [ "$u" -le "$2" ]; do
		if ! "$EXPTOOL" stat "$u" >/dev/null; then
			shm_units="$shm_units $u"
			unit=$u
			return 0
		fi
		u=$((u + 1))
	done
	echo "Bail out! no free NTP SHM unit in $1..$2" >&2
	return 1
}

# clockd_fails LOG PATTERN ARGS...: clockd with ARGS exits 1 (without
# going live) and LOG has PATTERN.
clockd_fails() {
	log=$1 pat=$2
	shift 2
	"$CLOCKD" -o page="$CLOCKD_SHM" "$@" 2>"$log"
	rc=$?
	sed 's/^/# clockd: /' "$log"
	[ "$rc" -eq 1 ] && grep -q -- "$pat" "$log"
}

# need_chrony: CHRONYD and CHRONYC, or the whole test skips (chrony is not
# installed, or we are not root: chronyd needs root even with -x).
need_chrony() {
	CHRONYD=$(command -v chronyd || echo /usr/sbin/chronyd)
	CHRONYC=$(command -v chronyc || echo /usr/bin/chronyc)
	if [ ! -x "$CHRONYD" ] || [ ! -x "$CHRONYC" ]; then
		echo "1..0 # SKIP chronyd/chronyc not installed (Debian package chrony)"
		exit 0
	fi
	if [ "$(id -u)" -ne 0 ]; then
		echo "1..0 # SKIP chronyd needs root (even with -x)"
		exit 0
	fi
}
