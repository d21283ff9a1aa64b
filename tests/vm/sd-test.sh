#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The systemd guest's checks (make check-systemd), run at boot by
# clockd-vm-test.service with systemd as PID 1: what the packaged units do
# under systemd itself, shown with systemctl and journalctl. Each check
# prints one unnumbered TAP line behind the prefix CLOCKD-VM: on the
# serial console (tests/vm/run-systemd.sh numbers them); a failing check
# does not stop the next. Ends with END and a power-off.
#
# From tests/vm/run-systemd.sh, in /usr/local/libexec/clockd-vm: env
# (CLOCKCTL, CLOCKD_CONF: where this install put them; DEBS: the .debs to
# install, or empty when a make install tree was laid into the root
# before boot), sd-arm (tests/vm/sd-arm.c).
set -u
HERE=/usr/local/libexec/clockd-vm
. "$HERE/env"
SD_ARM=$HERE/sd-arm
P=CLOCKD-VM:

out() { echo "$P $*"; }
ok() { out "ok - $*"; }
nok() { out "not ok - $*"; }
note() { out "# $*"; }
# check DESCRIPTION COMMAND...: ok when COMMAND succeeds. Never redirect a
# check's output: its TAP line is on it.
check() {
	d=$1
	shift
	if "$@"; then ok "$d"; else nok "$d"; fi
}
# Monotonic seconds since boot, as journalctl -o short-monotonic shows them.
now() { cut -d' ' -f1 /proc/uptime; }
# poll SECONDS COMMAND...: until COMMAND succeeds, every 0.1 s, for at most
# SECONDS of the clock (journalctl alone takes a while under TCG).
poll() {
	end=$(awk -v t="$(now)" -v s="$1" 'BEGIN { print t + s }')
	shift
	while :; do
		"$@" && return 0
		le "$end" "$(now)" && return 1
		sleep 0.1
	done
}
cursor() { journalctl --show-cursor -n 0 -q | sed -n 's/^-- cursor: //p'; }
# journal_since CURSOR [journalctl options]: entries after CURSOR.
journal_since() {
	c=$1
	shift
	journalctl -q --no-pager --after-cursor="$c" "$@"
}
state() { systemctl is-active "$1" 2>/dev/null; }
is_active() { [ "$(state "$1")" = active ]; }
mainpid() { systemctl show -p MainPID --value clockd.service; }
le() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a <= b) }'; }
# conf KEY=VALUE...: the test's configuration file.
conf() {
	{
		echo "# written by tests/vm/sd-test.sh"
		for kv in "$@"; do echo "${kv%%=*} = ${kv#*=}"; done
	} > "$CLOCKD_CONF"
	chmod 644 "$CLOCKD_CONF"
}
# section TITLE: a note with the time since boot, to see where it goes.
section() { note "--- $1 (t=$(now) s)"; }
show_journal() {
	journalctl -q --no-pager -b -u clockd.service -n "${1:-15}" | sed "s/^/$P # journal: /"
}

note "systemd $(systemctl --version | sed -n '1s/^systemd //p'), kernel $(uname -r)"
note "PID 1: $(cat /proc/1/comm)"
check "systemd is PID 1" [ "$(cat /proc/1/comm)" = systemd ]

# 1. Install. The .debs' maintainer scripts run sysusers and tmpfiles
# themselves; a make install tree was in place before boot, so the boot's
# systemd-sysusers and systemd-tmpfiles-setup read its files.
section "1. Install"
if [ -n "${DEBS:-}" ]; then
	check "dpkg -i the .debs" dpkg -i "$DEBS"/*.deb
else
	note "clockd from a make install tree, laid into the root before boot"
	ldconfig
	systemctl daemon-reload
fi
check "clockd.service and clockd.socket are known to systemd" \
	sh -c 'systemctl cat clockd.service clockd.socket >/dev/null'

# 2. sysusers and tmpfiles.
section "2. sysusers and tmpfiles"
check "sysusers made the system user and group clockd" \
	sh -c 'getent passwd clockd >/dev/null && getent group clockd >/dev/null'
note "user: $(getent passwd clockd)"
if [ -z "${DEBS:-}" ]; then
	# Early in the boot, before journald listens, systemd-sysusers logs
	# through the kernel's log: the whole boot's journal is searched.
	check "the boot's systemd-sysusers created them (journal)" \
		sh -c "journalctl -q -b | grep -q \"systemd-sysusers.*Creating user 'clockd'\""
	journalctl -q -b | grep -E "sysusers.*(clockd|Finished|Failed)" | head -n 4 | sed "s/^/$P # journal: /"
	check "/run/clockd exists before clockd.socket ever started" \
		sh -c '[ -d /run/clockd ] && [ "$(systemctl show -p ActiveEnterTimestampMonotonic --value clockd.socket)" = 0 ]'
fi
check "tmpfiles made /run/clockd 0755 root:root" \
	[ "$(stat -c '%a %U %G' /run/clockd)" = "755 root root" ]
check "systemd-tmpfiles reads clockd's line" \
	sh -c 'systemd-tmpfiles --cat-config | grep -q "^d /run/clockd "'

# 3. Socket activation: the service starts on a first client.
section "3. Socket activation"
conf source=posix tick=timerfd hz=100 stale_after_ms=2000 log_level=info
systemctl stop clockd.service clockd.socket 2>/dev/null
systemctl enable --now clockd.socket
check "clockd.socket enabled and listening" \
	sh -c '[ "$(systemctl is-enabled clockd.socket)" = enabled ] && [ "$(systemctl is-active clockd.socket)" = active ]'
check "clockd.service inactive before the first client" \
	[ "$(state clockd.service)" = inactive ]
note "socket: $(stat -c '%A %U %G %n' /run/clockd/control)"
check "control socket srw-rw---- root:clockd" \
	[ "$(stat -c '%A %U %G' /run/clockd/control)" = "srw-rw---- root clockd" ]
c=$(cursor)
check "first client (clockctl timers) answered" sh -c "$CLOCKCTL timers >/dev/null"
check "clockd.service active after the first client" poll 30 is_active clockd.service
check "journal: clockd took the socket systemd passed" \
	sh -c "journalctl -q --after-cursor='$c' -u clockd.service | grep -q 'control: socket /run/clockd/control passed by systemd'"
check "systemd says the socket triggered it" \
	sh -c 'systemctl show -p TriggeredBy --value clockd.service | grep -q clockd.socket'

# 4. READY=1: active only once the page is live. Started without waiting,
# the unit is polled; the first time it reads active, the page must
# already be live (clockctl status exits 0 only for a live page).
section "4. READY=1"
systemctl stop clockd.service
activating=0 live_when_active=no
systemctl start --no-block clockd.service
i=0
while [ $i -lt 600 ]; do
	s=$(state clockd.service)
	if [ "$s" = active ]; then
		$CLOCKCTL status >/dev/null 2>&1 && live_when_active=yes
		break
	fi
	[ "$s" = activating ] && activating=$((activating + 1))
	sleep 0.05
	i=$((i + 1))
done
note "polls that saw 'activating' before 'active': $activating"
check "READY=1: the page is live as soon as the unit is active" [ $live_when_active = yes ]
# The journal's order of the two lines is a note, not a check: the
# daemon's stderr stream and PID 1's message reach journald separately.
note "journal order: $(journalctl -q -b -o cat _SYSTEMD_UNIT=clockd.service + UNIT=clockd.service |
	grep -E '^(running: |Started )' | tail -n 2 | tr '\n' '|')"
check "clockd.service is Type=notify, NotifyAccess=main" \
	[ "$(systemctl show -p Type -p NotifyAccess --value clockd.service | tr '\n' ' ')" = "notify main " ]
note "status text: $(systemctl show -p StatusText --value clockd.service)"

# 4b. The scheduling policy under the unit: clockd kept CAP_SYS_NICE (the
# bounding set) and runs its tick thread SCHED_FIFO 40 and every timer
# thread SCHED_FIFO 30 (the defaults), its main thread SCHED_OTHER.
section "4b. Scheduling"
# threads PATTERN: "policy/priority" of the daemon's threads whose name
# matches PATTERN (a case pattern), one distinct value a line.
threads() {
	for t in /proc/"$(mainpid)"/task/*; do
		case $(cat "$t/comm") in $1) awk '{ print $41 "/" $40 }' "$t/stat" ;; esac
	done | sort -u
}
note "threads: tick $(threads clockd-tick), timers $(threads 'clockd-tb/*' | tr '\n' ' '), main $(threads clockd)"
check "the tick thread runs SCHED_FIFO 40" [ "$(threads clockd-tick)" = 1/40 ]
check "every timer thread runs SCHED_FIFO 30" [ "$(threads 'clockd-tb/*')" = 1/30 ]
check "the main thread runs SCHED_OTHER" [ "$(threads clockd)" = 0/0 ]
check "clockd kept CAP_SYS_NICE alone" \
	[ "$(awk '$1 == "CapEff:" { print $2 }' /proc/"$(mainpid)"/status)" = 0000000000800000 ]
check "journal: SCHED_FIFO, tick thread at 40, timer threads at 30" \
	sh -c "journalctl -q -b -o cat _SYSTEMD_UNIT=clockd.service | grep -q 'scheduling: SCHED_FIFO, tick thread at 40, timer threads at 30'"

# 5. The watchdog restarts a daemon stopped with SIGSTOP.
section "5. The watchdog restarts a daemon stopped with SIGSTOP"
wd=$(systemctl show -p WatchdogUSec --value clockd.service)
wds=$(echo "$wd" | sed -n 's/^\([0-9]*\)s$/\1/p')
note "WatchdogSec: $wd"
pid=$(mainpid)
restarts=$(systemctl show -p NRestarts --value clockd.service)
c=$(cursor)
t0=$(now)
kill -STOP "$pid"
new_pid() { p=$(mainpid); [ "$p" != 0 ] && [ "$p" != "$pid" ] && is_active clockd.service; }
poll 60 new_pid
t1=$(now)
twd=$(journal_since "$c" -o short-monotonic -u clockd.service | grep 'Watchdog timeout' |
	head -n 1 | sed -n 's/^\[ *\([0-9.]*\)\].*/\1/p')
note "SIGSTOP at ${t0} s; watchdog timeout at ${twd:-never} s; new daemon active at ${t1} s (pid $pid -> $(mainpid))"
wd_in_time() { [ -n "$twd" ] && [ -n "$wds" ] && le "$(awk "BEGIN { print $twd - $t0 }")" $((wds + 2)); }
check "watchdog: journal says Watchdog timeout within WatchdogSec (+2 s) of the SIGSTOP" wd_in_time
restarted() {
	[ "$(systemctl show -p NRestarts --value clockd.service)" = $((restarts + 1)) ] &&
		is_active clockd.service && $CLOCKCTL status >/dev/null
}
check "watchdog: a new daemon is active and live, NRestarts went up by one" restarted
journal_since "$c" -u clockd.service | grep -E 'Watchdog|Failed with|Scheduled restart|Started' |
	sed "s/^/$P # journal: /"

# 6. ExecReload applies a new log_level.
section "6. ExecReload applies a new log_level"
pid=$(mainpid)
conf source=posix tick=timerfd hz=100 stale_after_ms=2000 log_level=debug
c=$(cursor)
check "systemctl reload clockd" systemctl reload clockd.service
reloaded() {
	journal_since "$c" -u clockd.service | grep -q 'reload: log_level is now debug' &&
		[ "$(mainpid)" = "$pid" ] && is_active clockd.service
}
check "reload: journal says log_level is now debug, same process, active" poll 10 reloaded
$CLOCKCTL timers >/dev/null 2>&1
sleep 1
debug_logged() { journal_since "$c" -u clockd.service -o verbose | grep -q '^ *PRIORITY=7$'; }
check "reload: debug messages are logged after it (a client connecting)" poll 10 debug_logged
journal_since "$c" -u clockd.service | head -n 6 | sed "s/^/$P # journal: /"

# 7. source = hpet under the unit's DeviceAllow.
section "7. source = hpet under DeviceAllow"
note "$(systemctl show -p DevicePolicy -p DeviceAllow clockd.service | tr '\n' ' ')"
conf source=hpet tick=timerfd hz=100 stale_after_ms=2000 log_level=info
check "source=hpet: clockd restarts and is active" systemctl restart clockd.service
check "source=hpet: clockctl status says live, source hpet" \
	sh -c "$CLOCKCTL status | grep -Eq '^ *source: hpet'"
$CLOCKCTL status 2>&1 | sed -n 's/^ *\(state\|source\|tick\|HZ\): */# status: \1: /p' | sed "s/^/$P /"
check "source=hpet: clockctl time reads the clocks" sh -c "$CLOCKCTL time >/dev/null"
# Without /dev/hpet in DeviceAllow= the cgroup's device policy refuses it:
# the allowance is what lets it through.
mkdir -p /run/systemd/system/clockd.service.d
printf '[Service]\nDeviceAllow=\nDeviceAllow=char-rtc r\nRestart=no\n' \
	> /run/systemd/system/clockd.service.d/no-hpet.conf
systemctl daemon-reload
c=$(cursor)
check "source=hpet: without DeviceAllow=/dev/hpet the start fails" \
	sh -c '! systemctl restart clockd.service 2>/dev/null'
journal_since "$c" -u clockd.service -p warning | head -n 3 | sed "s/^/$P # journal: /"
rm -r /run/systemd/system/clockd.service.d
systemctl daemon-reload
systemctl reset-failed clockd.service
check "source=hpet: with the unit's DeviceAllow again it starts" systemctl restart clockd.service

# 8. Group clockd: a member arms timers, others cannot reach the socket.
section "8. Group clockd"
useradd -M -s /usr/sbin/nologin -G clockd alice
useradd -M -s /usr/sbin/nologin bob
as() { u=$1; shift; setpriv --reuid="$u" --regid="$u" --init-groups "$@"; }
r=$(as alice "$SD_ARM" 2>&1)
note "alice (in group clockd): $r"
check "a member of group clockd arms a timer and it fires" [ "$r" = fired ]
r=$(as bob "$SD_ARM" 2>&1)
note "bob (not in group clockd): $r"
bob_reads() { as bob $CLOCKCTL status >/dev/null; }
check "a non-member reads the time page (clockctl status as bob)" bob_reads
check "a non-member cannot arm a timer (EACCES)" sh -c "echo '$r' | grep -q '^arm: EACCES'"

# 9. systemd-analyze security.
section "9. systemd-analyze security"
exposure=$(systemd-analyze security clockd.service 2>/dev/null |
	sed -n 's/.*Overall exposure level for clockd.service: \([0-9.]*\).*/\1/p')
note "systemd-analyze security clockd.service: ${exposure:-no figure}"
systemd-analyze security clockd.service 2>/dev/null | grep -E '^✗' | sed "s/^/$P # security: /"
check "systemd-analyze security: exposure at most 2.0" sh -c "[ -n '$exposure' ] && awk 'BEGIN { exit !($exposure <= 2.0) }'"

# 9b. chrony as Debian packages it (chrony.service runs chronyd as root
# until it drops to _chrony), fed by the packaged clockd (user clockd)
# through the NTP SHM segment, configured as the README says: the shipped
# example as a drop-in, a refclock line in chrony's conf.d. chronyd is
# restarted first, so that it makes the segment (root, 0600) and clockd,
# restarted next, must take that one; then chronyd again, once, and it
# must select clockd again and keep receiving its samples. clockd runs
# free (reference = none): with the system reference it would follow the
# clock chronyd steers.
section "9b. chrony as Debian packages it, fed through NTP SHM"
conf source=posix tick=timerfd hz=100 stale_after_ms=2000 log_level=info reference=none
note "chrony: $(dpkg-query -W -f='${Version}' chrony 2>&1)"
example=$(find /usr/share/doc/clockd /usr/local/share/doc/clockd -name chrony-export.conf 2>/dev/null | head -n 1)
check "the chrony example is installed ($example)" [ -n "$example" ]
mkdir -p "$CLOCKD_CONF.d"
cp "$example" "$CLOCKD_CONF.d/chrony.conf" 2>/dev/null
printf 'refclock SHM 2 refid CLKD poll 3 precision 1e-6\n' >/etc/chrony/conf.d/clockd.conf
check "chrony.service restarts with clockd's refclock" systemctl restart chrony.service
note "segment made by chronyd: $(ipcs -m | awk '$1 == "0x4e545032" { print "owner " $3 ", perms " $4 }')"
c=$(cursor)
check "clockd.service restarts with the example drop-in" systemctl restart clockd.service
check "clockd runs as user clockd" [ "$(ps -o user= -p "$(mainpid)" | tr -d ' ')" = clockd ]
journal_since "$c" -u clockd.service | grep -i 'shm' | head -n 3 | sed "s/^/$P # journal: /"
seg_root_0600() { ipcs -m | awk '$1 == "0x4e545032" && $3 == "root" && $4 == "600" { f = 1 } END { exit !f }'; }
check "the segment is 0600, owned by root" seg_root_0600
selected() { chronyc -n sources 2>/dev/null | grep -q '^#\* *CLKD'; }
# samples: how many chronyd keeps of CLKD (chronyc sourcestats: NP).
samples() { chronyc -c sourcestats 2>/dev/null | awk -F, '$1 == "CLKD" { print $2 }'; }
check "chronyc sources selects CLKD (*)" poll 180 selected
chronyc -n sources 2>&1 | sed "s/^/$P # chronyc: /"
check "chrony.service restarts (once)" systemctl restart chrony.service
check "... and chronyc sources selects CLKD again" poll 180 selected
n1=$(samples)
sleep 25
n2=$(samples)
note "chronyd's samples of CLKD: ${n1:-none}, then ${n2:-none} 25 s later"
check "chronyd keeps receiving clockd's samples (its count grows over three polls)" \
	sh -c "[ -n '$n1' ] && [ -n '$n2' ] && [ '$n2' -gt '$n1' ]"
chronyc -n sourcestats 2>&1 | sed "s/^/$P # chronyc: /"
rm -f /etc/chrony/conf.d/clockd.conf "$CLOCKD_CONF.d/chrony.conf"
systemctl stop chrony.service

# 9c. Structured journal entries: the system reference's lock is a state
# event, sent with sd_journal_sendv(): MESSAGE_ID and CLOCKD_* fields a
# reader can select on (clockd(8), JOURNAL FIELDS).
section "9c. Journal fields"
conf source=posix tick=timerfd hz=100 stale_after_ms=2000 log_level=info
c=$(cursor)
check "clockd.service restarts on the system reference" systemctl restart clockd.service
# One entry a line (-o json); one match besides the unit's (journalctl
# ORs -u's matches with further ones in ways that differ by version).
locked_entry() {
	journal_since "$c" -u clockd.service -o json MESSAGE_ID=3922ec23399449bda1c859bb20965944 |
		grep '"CLOCKD_STATE":"locked"' | grep -q '"CLOCKD_REFERENCE":"system"'
}
check "journalctl MESSAGE_ID=3922ec23... finds the lock: CLOCKD_STATE=locked, CLOCKD_REFERENCE=system" \
	poll 60 locked_entry
journal_since "$c" -u clockd.service -o verbose MESSAGE_ID=3922ec23399449bda1c859bb20965944 |
	grep -E '^ *(MESSAGE|CLOCKD_[A-Z_]*)=' | head -n 8 | sed "s/^ */$P # journal: /"

# 10. A clean stop.
section "10. A clean stop"
check "systemctl stop: clockd exits with success" \
	sh -c 'systemctl stop clockd.service && [ "$(systemctl show -p Result --value clockd.service)" = success ] &&
		[ "$(systemctl show -p ExecMainStatus --value clockd.service)" = 0 ]'
show_journal 5

out END
systemctl poweroff --no-block
