#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# clockctl metrics: the daemon's state as Prometheus metrics. The text
# format is validated by promtool check metrics (Debian: prometheus) and,
# for --openmetrics, by the OpenMetrics parser of prometheus_client
# (Debian: python3-prometheus-client); each is skipped, saying so, where
# it is not installed. The values are the daemon's: live, its HZ, the
# tracking of the simulated reference, the devices, a timer base per CPU,
# and clockd_up 0 once the daemon is gone. And watch's offset and
# frequency columns, against the same daemon.
. "$top_srcdir/tests/clockctl/lib.sh"
export CLOCKD_SHM="$tmp/page"
unset CLOCKD_SOCKET

start_daemon -o hz=250 -o source=sim -o tick=sim -o reference=sim -o timer_cpus=0
poll 60 status_is 0 || { diag "$(cat "$tmp/daemon.log")"; bail "no live daemon"; }

# metric NAME[{LABELS}]: the value of that sample in $tmp/out
metric() { awk -v k="$1" '$1 == k { print $2 }' "$tmp/out"; }

run metrics
[ "$rc" -eq 0 ] && [ "$(metric clockd_up)" = 1 ] && [ "$(metric clockd_hz)" = 250 ] &&
	[ "$(metric 'clockd_page_state{state="live"}')" = 1 ] &&
	[ "$(metric 'clockd_page_state{state="gone"}')" = 0 ] &&
	[ "$(metric clockd_daemon_starts_total)" = 1 ]
check $? "metrics: clockd_up 1, hz 250, page state live, one daemon start"

grep -q '^clockd_tracking_state{reference="sim",state="[a-z]*"} 1$' "$tmp/out" &&
	grep -q '^clockd_tracking_offset_seconds -\{0,1\}[0-9]*\.[0-9]\{9\}$' "$tmp/out" &&
	grep -q '^clockd_tracking_frequency_ppm -\{0,1\}[0-9]*\.[0-9]\{3\}$' "$tmp/out" &&
	grep -q '^clockd_tracking_error_bound_seconds [0-9]' "$tmp/out" &&
	grep -q '^clockd_tracking_skew_ppm [0-9]' "$tmp/out"
check $? "metrics: the tracking of the sim reference (state, offset, frequency, skew, bound)"

grep -q '^clockd_device_state{role="source",name="sim",device="[^"]*",state="active"} 1$' "$tmp/out" &&
	grep -q '^clockd_device_faults_total{role="tick",name="sim",' "$tmp/out"
check $? "metrics: the devices' states and fault counters"

[ "$(metric clockd_timer_stats_up)" = 1 ] &&
	[ -n "$(metric 'clockd_timer_expiries_total{cpu="0"}')" ] &&
	[ -n "$(metric 'clockd_timer_lateness_seconds{cpu="0",quantile="0.99"}')" ] &&
	[ -n "$(metric 'clockd_timer_pending{cpu="0",kind="ns"}')" ]
check $? "metrics: the timer base of CPU 0 (expiries, pending, lateness quantiles)"

cp "$tmp/out" "$tmp/metrics.prom"
if command -v promtool >/dev/null 2>&1; then
	promtool check metrics <"$tmp/metrics.prom" >"$tmp/promtool.out" 2>&1
	st=$?
	ok $st "promtool check metrics passes on clockctl metrics"
	[ $st -eq 0 ] || diag "$(cat "$tmp/promtool.out")"
else
	skip "promtool not installed (Debian: prometheus)"
fi

run metrics --openmetrics
[ "$rc" -eq 0 ] && [ "$(tail -n 1 "$tmp/out")" = "# EOF" ] &&
	grep -q '^# TYPE clockd_timer_expiries counter$' "$tmp/out" &&
	grep -q '^clockd_timer_expiries_total{cpu="0"} ' "$tmp/out"
check $? "--openmetrics: counter families without _total, samples with it, # EOF last"
if /usr/bin/python3 -c 'import prometheus_client.openmetrics.parser' 2>/dev/null; then
	/usr/bin/python3 - "$tmp/out" >"$tmp/om.out" 2>&1 <<'PY'
import sys
from prometheus_client.openmetrics.parser import text_string_to_metric_families as parse
fams = list(parse(open(sys.argv[1]).read()))
assert any(f.name == "clockd_up" and f.samples[0].value == 1 for f in fams), "clockd_up"
print(len(fams), "families")
PY
	st=$?
	ok $st "the OpenMetrics parser of prometheus_client accepts --openmetrics: $(cat "$tmp/om.out" | tail -n 1)"
else
	skip "prometheus_client not installed for /usr/bin/python3 (Debian: python3-prometheus-client)"
fi

# watch shows the tracking's offset and frequency (the sim reference is
# configured; the daemon without one shows "-", features.sh's daemon).
run watch -n 2 -i 0.2
[ "$rc" -eq 0 ] && [ "$(grep -c ' offset [+-][0-9]* ns  frequency [+-][0-9]*\.[0-9]\{3\} ppm  live$' "$tmp/out")" -eq 2 ]
check $? "watch: every line has the offset and frequency of the tracking"
run --json watch -n 1
[ "$rc" -eq 0 ] && jq -e '(.offset_ns | type) == "number" and (.freq_ppb | type) == "number"' "$tmp/out" >/dev/null
check $? "watch --json: offset_ns and freq_ppb"

run metrics --bogus
[ "$rc" -eq 2 ]
check $? "metrics --bogus: usage error"

kill -TERM "$daemon_pid"
wait "$daemon_pid"
daemon_pid=
run metrics
[ "$rc" -eq 0 ] && [ "$(metric clockd_up)" = 0 ] && [ "$(metric 'clockd_page_state{state="gone"}')" = 1 ] &&
	! grep -q '^clockd_tracking' "$tmp/out"
check $? "metrics without a daemon: clockd_up 0, page state gone, exit 0"

finish
