#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Time namespaces (issue 25 item 4): a process in a namespace whose
# CLOCK_MONOTONIC and CLOCK_BOOTTIME are offset by +1, -200 and +1000 s
# sees clockd live, its CLOCKD_MONOTONIC (_RAW, _COARSE) offset as its
# kernel's (clockd - kernel the same as in the initial namespace), every
# read succeeding, a preloaded program's CLOCK_MONOTONIC its namespace's,
# and relative and absolute sleeps and timers lasting what they should;
# with the default source and with source=posix (a kernel clock that the
# client reads itself and the namespace shifts).
. "$top_srcdir/tests/daemon/common.sh"

CLOCKCTL=$top_builddir/src/clockctl/clockctl
TPROBE=$top_builddir/tests/timens/tprobe
command -v jq >/dev/null || skip_all "jq is not installed"
command -v unshare >/dev/null || skip_all "unshare(1) is not installed"
if ! unshare --time --monotonic 1 true 2>"$T/err"; then
	skip_all "no time namespaces here (unshare --time: $(head -1 "$T/err"); root and Linux 5.6 or later needed)"
fi
# An ASan build's runtime must come first: the preload comes after it.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
WAIT_MS=300
# A wait is never short, and late by this much at most (a loaded machine:
# 0.6 s seen at a load average of 20; a lost or doubled offset is a whole
# second or more: 1 s late, or no wait at all, at +1 s).
LATE_MS=800

# in_ns N CMD...: run CMD in a new time namespace at offset N s
in_ns() {
	ns_off=$1
	shift
	unshare --time --monotonic "$ns_off" --boottime "$ns_off" "$@"
}

# close_ns A B: |A - B| <= 50 ms (ns)
close_ns() {
	d=$(($1 - $2))
	[ "${d#-}" -le 50000000 ]
}

# field LINE KEY: the value of KEY=V in LINE
field() {
	echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"
}

# check_waits LABEL FILE: every wait in FILE lasted WAIT_MS .. +LATE_MS
check_waits() {
	bad=$(awk -v lo=$((WAIT_MS * 1000000 - 1000000)) -v hi=$(((WAIT_MS + LATE_MS) * 1000000)) \
		'NF < 2 || $2 < lo || $2 > hi || NF > 2 { print $1 "=" $2 / 1e6 "ms" }' "$2")
	count=$(wc -l <"$2")
	[ "$count" -eq 14 ] && [ -z "$bad" ]
	ok $? "$1: the 14 waits of ${WAIT_MS} ms (sleeps, timers, relative, absolute) last that long${bad:+ (not: $bad)}"
	[ -z "$bad" ] || sed 's/^/# /' "$2"
}

run_source() {
	src=$1
	shift
	start_daemon "$T/log" "$@" || { ok 1 "$src: start"; return; }
	host=$("$TPROBE" reads 200)
	ok $? "$src: initial namespace: every read succeeds ($host)"
	hmono=$(field "$host" mono)
	hreal=$(field "$host" real)
	hraw=$(field "$host" raw)
	uptime=$(cut -d. -f1 /proc/uptime)
	for n in 1 -200 1000; do
		if [ "$n" -lt 0 ] && [ "$uptime" -le $((-n + 10)) ]; then
			skip "$src: offset $n s" "the machine is up ${uptime} s: CLOCK_MONOTONIC cannot go below 0"
			continue
		fi
		st=$(in_ns "$n" "$CLOCKCTL" --page "$CLOCKD_SHM" --json status 2>&1 | jq -r .state)
		[ "$st" = live ]
		ok $? "$src: offset $n s: clockctl status says live ($st)"
		since=$(in_ns "$n" "$CLOCKCTL" --page "$CLOCKD_SHM" --json sources 2>&1 | jq -r '.devices[0].since_sec')
		[ -n "$since" ] && [ "$since" -ge 0 ] 2>/dev/null && [ "$since" -lt 600 ]
		ok $? "$src: offset $n s: clockctl sources: the source changed state ${since} s ago"
		line=$(in_ns "$n" "$TPROBE" reads 2000)
		ok $? "$src: offset $n s: 2000 rounds of reads, none fails"
		m=$(field "$line" mono)
		r=$(field "$line" raw)
		c=$(field "$line" coarse)
		close_ns "$m" "$hmono" && close_ns "$r" "$hraw" && [ "${c#-}" -le 100000000 ]
		ok $? "$src: offset $n s: CLOCKD_MONOTONIC, _RAW, _COARSE carry the offset ($line; host mono=$hmono)"
		ic=$(field "$line" icoarse)
		close_ns "$(field "$line" imono)" "$hmono" && [ "${ic#-}" -le 100000000 ]
		ok $? "$src: offset $n s: so do the inline reads of <clockd/clockd.h>"
		close_ns "$(field "$line" real)" "$hreal"
		ok $? "$src: offset $n s: CLOCKD_REALTIME is not moved"
		pline=$(in_ns "$n" env CLOCKD_PRELOAD=refuse "$CLOCKCTL" --page "$CLOCKD_SHM" run -- "$TPROBE" reads 200 2>"$T/err")
		rc=$?
		[ $rc -eq 0 ] && close_ns "$(field "$pline" pmono)" "$hmono" && close_ns "$(field "$pline" praw)" "$hraw"
		ok $? "$src: offset $n s: under the preload (refuse) CLOCK_MONOTONIC is the namespace's ($pline$(head -1 "$T/err"))"
		e=$(in_ns "$n" "$TPROBE" absfirst "$WAIT_MS" | awk '$1 == "absfirst" && NF == 2 { print $2 }')
		[ -n "$e" ] && [ "$e" -ge $((WAIT_MS * 1000000 - 1000000)) ] && [ "$e" -le $(((WAIT_MS + LATE_MS) * 1000000)) ]
		ok $? "$src: offset $n s: an absolute monotonic timer armed before any read lasts ${WAIT_MS} ms (${e:-none} ns)"
		in_ns "$n" "$TPROBE" waits "$WAIT_MS" >"$T/waits"
		check_waits "$src: offset $n s: libclockd" "$T/waits"
		in_ns "$n" env CLOCKD_PRELOAD=refuse "$CLOCKCTL" --page "$CLOCKD_SHM" run -- "$TPROBE" waits "$WAIT_MS" >"$T/waits" 2>"$T/err"
		check_waits "$src: offset $n s: under the preload" "$T/waits"
	done
	stop_daemon TERM
}

run_source default
run_source posix -o source=posix
finish
