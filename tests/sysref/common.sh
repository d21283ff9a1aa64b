# SPDX-License-Identifier: LGPL-2.1-or-later
# Shared by the system reference tests: tests/discipline/common.sh, the
# follow tool, and the bounds of #25 (errors in ns).
. "$top_srcdir/tests/discipline/common.sh"
FOLLOW=$top_builddir/tests/sysref/follow
MAX_NS=10000      # |CLOCKD_REALTIME - CLOCK_REALTIME| at every sample
P99_NS=2000       # ... at the 99th percentile
DRIFT_NS=10000    # CLOCKD_MONOTONIC against CLOCK_MONOTONIC over the run

# lock_clock: hold the lock of the tests that move the kernel's frequency
# (slew.sh, chrony.sh, run in parallel by make check) until the test
# exits, so that none takes another's moved frequency for the one to
# restore. Skips the test if it cannot be had in 5 minutes.
lock_clock() {
	command -v flock >/dev/null || { echo "1..0 # SKIP flock(1) is not installed"; exit 0; }
	exec 9>"${TMPDIR:-/tmp}/clockd-sysref-adjtimex.lock"
	flock -w 300 9 || { echo "1..0 # SKIP another test held the clock for 5 minutes"; exit 0; }
}

# check_follow NAME FILE: the bounds on follow's last line in FILE.
check_follow() {
	f=$2
	grep '^#' "$2"
	# shellcheck disable=SC2046 # six words
	set -- "$1" $(tail -1 "$2")
	echo "# $1: $2 samples, |error| p50 $3 ns, p99 $4 ns, max $5 ns; monotonic drift $6 ns; bracket p50 $7 ns"
	[ "${2:-0}" -ge 100 ]
	ok $? "$1: enough samples ($2)"
	[ "${5:-99999999}" -le $MAX_NS ]
	ok $? "$1: |CLOCKD_REALTIME - CLOCK_REALTIME| <= $MAX_NS ns at every sample (max $5)"
	[ "${4:-99999999}" -le $P99_NS ]
	ok $? "$1: ... and <= $P99_NS ns at the 99th percentile ($4)"
	[ "${6:-99999999}" -le $DRIFT_NS ]
	ok $? "$1: CLOCKD_MONOTONIC drifts <= $DRIFT_NS ns against CLOCK_MONOTONIC ($6)"
	# The error bound: a change of the kernel's rate is seen only at the
	# next sample (2 ms), so a few samples right after one may be over it.
	over=$(sed -n 's/^# \([0-9]*\) samples locked with .*/\1/p' "$f")
	[ -n "$over" ] && [ $((over * 100)) -le "$2" ]
	ok $? "$1: the error bound covers the error in 99 % of the locked samples ($over of $2 over it)"
}
