#!/bin/busybox sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# /init of the test guest (tests/vm/mkinitramfs.sh installs it). Runs each
# device check in its own subshell, so one that fails or hangs up to its
# deadline does not stop the others, and prints every result line on the
# serial console behind a prefix the host looks for (tests/vm/run.sh).
# Lines are unnumbered TAP ("ok - ...", "not ok - ...", "# ..."); the host
# numbers them. "END" last says the guest got through all of them.
/bin/busybox --install -s /bin
export PATH=/bin LD_LIBRARY_PATH=/lib/x86_64-linux-gnu
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mount -t tmpfs tmpfs /run
mount -t tmpfs tmpfs /tmp
# Keep kernel messages off the console the results travel on.
echo 1 > /proc/sys/kernel/printk

PREFIX=CLOCKD-VM:
say() { echo "$PREFIX $*"; }
# Every line of a check's output goes out prefixed; non-TAP lines
# (stderr of a program) become comments on the host.
report() { while IFS= read -r line; do say "$line"; done; }
ok() {
	if [ "$1" -eq 0 ]; then echo "ok - $2"; return 0; fi
	echo "not ok - $2"
	return 1
}
skip() { echo "ok - $1 # SKIP $2"; }

# poll SECONDS COMMAND...: until COMMAND succeeds (0) or time runs out (1)
poll() {
	limit=$(($1 * 10)); shift
	i=0
	until "$@"; do
		i=$((i + 1)); [ $i -lt $limit ] || return 1
		usleep 100000
	done
}

# Modules in dependency order, as mkinitramfs.sh listed them.
load_modules() {
	for m in $(cat /lib/modules/order); do
		insmod "/lib/modules/$m.ko"
		ok $? "module $m loads"
	done
}

is_live() { clockctl status 2>/dev/null | grep -q 'state: live'; }
is_gone() { ! kill -0 "$1" 2>/dev/null; }

# (a) the daemon on a timerfd tick: live, readable, stops on SIGTERM.
# Generous stale limit and a low HZ: one emulated CPU under TCG is slow.
check_clockd() {
	export CLOCKD_SHM=/run/clockd/page
	mkdir -p /run/clockd
	clockd -o page=$CLOCKD_SHM -o tick=timerfd -o hz=100 -o stale_after_ms=2000 \
		2>/tmp/clockd.log &
	pid=$!
	poll 30 is_live
	ok $? "clockd: clockctl status says live"
	clockctl status | sed -n 's/^ *\(source\|tick\|HZ\|state\): /# clockd: \1: /p'
	clockctl --json time > /tmp/time.json
	rc=$?
	grep -q '"monotonic":{"sec":' /tmp/time.json
	ok $((rc + $?)) "clockd: clockctl --json time reads the page"
	kill -TERM $pid
	poll 10 is_gone $pid
	ok $? "clockd: stops on SIGTERM"
	wait $pid
	ok $? "clockd: exit status 0 after SIGTERM"
	sed 's/^/# clockd log: /' /tmp/clockd.log
}

check_program() {
	if [ -x "/bin/$1" ]; then
		"/bin/$1" 2>&1
		ok $? "$1 ran to its end"
	else
		skip "$1" "not built on the host"
	fi
}

# (d) gpio-sim: a live 8-line chip, then EDGES pull changes on one line
# counted by gpio-check through libgpiod.
EDGES=10
LINE=3
gpio_chip_up() {
	cfg=/sys/kernel/config/gpio-sim/clockd
	mount -t configfs configfs /sys/kernel/config
	ok $? "gpio: configfs mounted" || return 1
	mkdir $cfg && mkdir $cfg/bank0 && echo 8 > $cfg/bank0/num_lines &&
		echo 1 > $cfg/live
	ok $? "gpio: gpio-sim chip with 8 lines made live" || return 1
	CHIP=$(cat $cfg/bank0/chip_name) && DEV=$(cat $cfg/dev_name)
	echo "# gpio: $DEV is /dev/$CHIP"
	poll 10 [ -c "/dev/$CHIP" ]
	ok $? "gpio: /dev/$CHIP appears"
}

gpio_toggle() {
	pull=/sys/devices/platform/$DEV/$CHIP/sim_gpio$LINE/pull
	n=0
	while [ $n -lt $EDGES ]; do
		if [ $((n % 2)) -eq 0 ]; then echo pull-up; else echo pull-down; fi > "$pull" || return 1
		n=$((n + 1))
		usleep 20000
	done
}

check_gpio() {
	[ -x /bin/gpio-check ] || { skip "gpio" "gpio-check not built (no libgpiod on the host)"; return; }
	gpio_chip_up || return
	ready=/tmp/gpio-ready
	gpio-check "/dev/$CHIP" $LINE $EDGES $ready 2>&1 &
	pid=$!
	poll 30 [ -e $ready ] || { wait $pid; return; }
	gpio_toggle
	ok $? "gpio: $EDGES pull changes written to sim_gpio$LINE"
	wait $pid
}

say "# guest kernel $(uname -r), init running"
load_modules 2>&1 | report
(check_clockd) 2>&1 | report
(check_program hpet-check) 2>&1 | report
(check_program rtc-check) 2>&1 | report
(check_gpio) 2>&1 | report
say END
poweroff -f
