# SPDX-License-Identifier: LGPL-2.1-or-later
# Shared by the discipline tests: tests/daemon/common.sh, and the tracking
# as clockctl shows it.
. "$top_srcdir/tests/daemon/common.sh"
CLOCKCTL=$top_builddir/src/clockctl/clockctl
MONITOR=$top_builddir/tests/devices/monitor

# field NAME: one field of clockctl --json tracking
field() {
	"$CLOCKCTL" --json tracking | sed -n "s/.*\"$1\":\(\"[^\"]*\"\|[^,}]*\).*/\1/p" | tr -d '"'
}
# wait_state STATE SECONDS: until the tracking is in STATE (polled every
# 0.1 s); non-zero if it is not by then.
wait_state() {
	i=0
	while [ $i -lt $(($2 * 10)) ]; do
		[ "$(field state)" = "$1" ] && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}
