#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Restart continuity: a daemon killed at any moment (SIGKILL) or stopped
# (SIGTERM) leaves a page that clients see as GONE/ESTALE; the next daemon
# on the same page keeps the file (same inode), bumps the generation by
# one, and continues monotonic time and jiffies_64 from beyond the last
# values any client read, also across an HZ change.
. "$top_srcdir/tests/daemon/common.sh"

inode() { stat -c %i "$CLOCKD_SHM"; }
generation() { "$PROBE" show | cut -d' ' -f1; }

# round N SIGNAL HZ-BEFORE HZ-AFTER [stopping]
round() {
	n=$1 sig=$2 hz0=$3 hz1=$4 gone_flag=$5
	gen0=$(generation) ino0=$(inode)
	# A reader runs until the daemon dies and records the largest values.
	rm -f "$T/last" "$T/last.ready"
	"$PROBE" watch "$T/last" &
	watch_pid=$!
	i=0
	while [ ! -e "$T/last.ready" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	stop_daemon "$sig"
	wait "$watch_pid"
	ok $? "round $n: a reader saw time only move forward until SIG$sig, then ESTALE"
	read -r mono0 j0 <"$T/last" || { mono0=0 j0=0; }
	echo "# round $n: last read before SIG$sig: monotonic $mono0 ns, jiffies_64 $j0"

	"$PROBE" gone $gone_flag
	ok $? "round $n: after SIG$sig a fresh client gets ESTALE and status GONE ${gone_flag:+(STOPPING)}"

	if ! start_daemon "$T/log.$n" -o hz="$hz1"; then
		ok 1 "round $n: restart at hz=$hz1"
		return
	fi
	gen1=$(generation) ino1=$(inode)
	echo "# generation $gen0 -> $gen1, inode $ino0 -> $ino1, hz $hz0 -> $hz1"
	[ "$ino1" = "$ino0" ] && [ "$gen1" -eq $((gen0 + 1)) ]
	ok $? "round $n: same page file, generation $gen0 -> $gen1"
	"$PROBE" after "$mono0" "$j0"
	ok $? "round $n: monotonic and jiffies_64 (hz $hz0 -> $hz1) continue beyond the last values read"
}

rm -f "$CLOCKD_SHM"
if ! start_daemon "$T/log.0" -o hz=250; then
	ok 1 "first start"
	finish
fi
for n in 1 2 3 4 5; do
	round $n KILL 250 250
done
round 6 KILL 250 1000
round 7 TERM 1000 1000 stopping
round 8 KILL 1000 24
finish
