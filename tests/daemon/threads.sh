#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The daemon's threads: its main, tick and reference threads through a run
# with every moving part (the simulated source, tick and reference with
# faults that make it fall back, the discipline, the NTP SHM export, a
# reload) while clients read the page; the daemon must stop cleanly. In the
# TSan variant (configure --enable-tsan; make check-tsan) TSan must report
# nothing.
. "$top_srcdir/tests/daemon/common.sh"
CLOCKCTL=$top_builddir/src/clockctl/clockctl
prog=$top_builddir/src/clockd/clockd
tsan=
grep -q '^#define CLOCKD_TSAN 1' "$top_builddir/config.h" && tsan=1
unit=$((200 + $$ % 50))
ipcrm -M $((0x4e545030 + unit)) 2>/dev/null

TSAN_OPTIONS="halt_on_error=1 exitcode=66" "$prog" -o page="$CLOCKD_SHM" -o hz=250 \
	-o source=sim,posix -o tick=sim,timerfd -o reference=sim -o sim_rate_ppm=15 \
	-o sim_jitter_ns=5000 -o "sim_script=1s spurious 2; 2s miss 1; 3s stall 200ms" \
	-o ntp_shm_unit=$unit -o stale_after_ms=1000 2>"$T/err" &
daemon_pid=$!
"$PROBE" live 30
ok $? "clockd goes live"
i=0
while [ $i -lt 40 ]; do
	"$CLOCKCTL" status >/dev/null 2>&1
	"$CLOCKCTL" sources >/dev/null 2>&1
	"$CLOCKCTL" tracking >/dev/null 2>&1
	[ $i -eq 20 ] && kill -HUP "$daemon_pid"
	sleep 0.2
	i=$((i + 1))
done
"$CLOCKCTL" sources >"$T/sources"
sed 's/^/# /' "$T/sources"
grep -Eq '^tick +sim +fault' "$T/sources" && grep -Eq '^source +sim +fault' "$T/sources" &&
	grep -Eq '^tick +timerfd +active' "$T/sources" && grep -Eq '^source +posix +active' "$T/sources"
ok $? "the simulated devices faulted and the daemon fell back"
"$PROBE" reads >/dev/null
ok $? "every clock reads"
kill -TERM "$daemon_pid"
wait "$daemon_pid"
rc=$?
daemon_pid=
ipcrm -M $((0x4e545030 + unit)) 2>/dev/null
grep -v '^clockd: ' "$T/err" | sed 's/^/# /' | head -60
[ $rc -eq 0 ]
ok $? "it stops cleanly on SIGTERM (status $rc; 66 is a TSan report)"
if [ -n "$tsan" ]; then
	! grep -q 'WARNING: ThreadSanitizer' "$T/err"
	ok $? "TSan reported no data race"
else
	skip "TSan reported no data race" "not the TSan variant (configure --enable-tsan)"
fi
finish
