#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Run the benchmarks against a private daemon: the read path (ns per call,
# ratios to the kernel's vDSO) and the daemon's idle CPU use at HZ=1000.
set -eu
builddir=${1:?usage: run.sh BUILDDIR}
dir=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$dir"; }
trap cleanup EXIT INT TERM

"$builddir/src/clockd/clockd" -o page="$dir/page" -o hz=1000 2>"$dir/clockd.log" &
pid=$!
export CLOCKD_SHM="$dir/page"
i=0
until "$builddir/bench/bench-read" >/dev/null 2>&1 </dev/null && [ -s "$dir/page" ]; do
	i=$((i + 1)); [ $i -lt 100 ] || { cat "$dir/clockd.log"; echo "bench: daemon did not come up"; exit 1; }
	sleep 0.1
done

echo "== ndelay accuracy (clockd_ndelay vs a spin on the kernel's clock), pinned to CPU 1"
taskset -c 1 "$builddir/bench/bench-delay"

echo "== read path (libclockd vs kernel vDSO), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
"$builddir/bench/bench-read"

# Idle CPU: the daemon beside tick-floor (a process that only blocks on a
# periodic timerfd at the same HZ), measured over the same 10 s so both see
# the same machine. CPU time is the sum of every thread's sum_exec_runtime
# (/proc/PID/task/*/schedstat, ns).
echo "== daemon idle CPU at HZ=1000 (no clients), beside the wake-up floor"
"$builddir/bench/tick-floor" 1000 &
floor=$!
cpu_ns() { cat /proc/"$1"/task/*/schedstat | awk '{ s += $1 } END { print s }'; }
sleep 1
d0=$(cpu_ns "$pid"); f0=$(cpu_ns "$floor"); t0=$(date +%s%N)
sleep 10
d1=$(cpu_ns "$pid"); f1=$(cpu_ns "$floor"); t1=$(date +%s%N)
kill "$floor"
awk -v d="$((d1 - d0))" -v f="$((f1 - f0))" -v t="$((t1 - t0))" 'BEGIN {
	printf "  clockd      %.2f%% of one core\n", d / t * 100
	printf "  tick-floor  %.2f%% of one core (1000 wake-ups/s doing nothing)\n", f / t * 100
	printf "  ratio clockd / floor %.2f; clockd work beyond the floor %.2f%% (%.2f us per tick)\n", d / f, (d - f) / t * 100, (d - f) / (t / 1e6) / 1000
	printf "  target clockd <= 1%%: %s\n", d / t * 100 <= 1 ? "met" : "MISSED" }'

# The daemon's timer wheel against libevent's timer heap (no daemon needed):
# ns per arm+cancel and per expiry at 1e3, 1e5, 1e6 pending, and the ratios.
echo "== timer wheel vs libevent evtimer_add/evtimer_del"
"$builddir/bench/bench-wheel"

# The discipline against a simulated 1 PPS, faster than real time (no
# daemon needed): 300 s of pulses 20 ppm fast with +-10 us of jitter, five
# seeds; the true RMS error and the time to reach it, fixed 64-offset
# window against the adaptive history (runs test); then with a change of
# rate half way.
echo "== discipline: fixed window vs adaptive history, 300 s of simulated 1 PPS"
"$builddir/bench/bench-discipline" 300 10000 20 5
echo "== discipline: the same with the rate changed by 0.5 ppm half way (the history must let go)"
"$builddir/bench/bench-discipline" 300 10000 20 5 0.5

# The shared-memory ring for timer submission and delivery (no daemon
# needed): records/s between two threads on two CPUs, batches of 1, 16 and
# 256, without the wake-up path, with it, and with a wake-up every batch;
# the ratio to the 2M records/s that 1M arm+cancel/s per client needs.
echo "== shared-memory ring (timer submission / delivery)"
"$builddir/bench/bench-ring"

# Client timers through libclockd, against a daemon with a control socket:
# delivery lateness vs a direct timerfd, and arm+cancel per second.
# with_socket [-o KEY=VALUE]...: a new daemon at HZ 1000 with a control
# socket, once it takes connections.
with_socket() {
	kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
	rm -f "$dir/ctl"
	"$builddir/src/clockd/clockd" -o page="$dir/page" -o control_socket="$dir/ctl" -o hz=1000 "$@" \
		2>"$dir/clockd.log" &
	pid=$!
	export CLOCKD_SOCKET="$dir/ctl"
	i=0
	until [ -S "$dir/ctl" ]; do
		i=$((i + 1)); [ $i -lt 100 ] || { cat "$dir/clockd.log"; echo "bench: no control socket"; exit 1; }
		sleep 0.1
	done
}

echo "== client timers (libclockd) vs direct timerfd"
with_socket
"$builddir/bench/bench-timers"

# A well-behaved client's 1 ms timer on the last CPU, quiet and while four
# attackers (timers beyond the quota on the same CPU, connections without
# end, garbage, requests beyond the message quota) flood the daemon, in
# alternating phases: lateness p50..max and the ratios (target p99 <=
# 1.5x), the daemon's peak memory, what each attacker got. The client and
# the daemon's timer bases run SCHED_FIFO 50 (its tick thread 60), the attackers SCHED_OTHER.
echo "== flood: a well-behaved client's timer, quiet vs flooded (default quotas)"
with_socket -o timer_priority=50 -o tick_priority=60
"$builddir/tests/stress/flood" --bench "$pid" $(($(nproc) - 1)) 60

# cyclictest (rt-tests) plainly and under libclockd-preload.so: wake-up
# latency p50/p99/max and their ratios; it starts a daemon of its own.
echo "== cyclictest: plain vs libclockd-preload.so"
kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; pid=
sh "$(dirname "$0")/bench-cyclictest.sh" "$builddir"
