#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The hardware drivers' setup errors on the build machine, which has no
# HPET, RTC, GPIO or PTP device: clockd exits 1 with a message naming the
# driver, the device and the reason. Files that exist but are not the
# device (/dev/null, /dev/zero) stand in for a wrong path.

: "${top_builddir:?run from make check (top_builddir unset)}"
CLOCKD=$top_builddir/src/clockd/clockd
T=$(mktemp -d "${TMPDIR:-/tmp}/clockd-hw.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT
. "$top_srcdir/tests/tap.sh"

# bad WHAT TEXT OPTION...: clockd exits 1 and its log holds TEXT.
bad() {
	what=$1 text=$2
	shift 2
	timeout 20 "$CLOCKD" -o page="$T/page" "$@" >"$T/log" 2>&1
	rc=$?
	ok $((rc != 1)) "$what: clockd exits 1 (status $rc)"
	grep -qF -- "$text" "$T/log"
	r=$?
	ok $r "$what: the message says \"$text\""
	[ $r -eq 0 ] || sed 's/^/# log: /' "$T/log"
}

bad "missing HPET (tick)" "tick hpet $T/hpet: no such device" -o tick=hpet -o hpet_device="$T/hpet"
bad "missing HPET (source)" "source hpet $T/hpet: no such device" -o source=hpet -o hpet_device="$T/hpet"
bad "HPET that is not one" "source hpet /dev/zero: not an HPET" -o source=hpet -o hpet_device=/dev/zero
bad "missing RTC" "tick rtc $T/rtc0: no such device" -o tick=rtc -o rtc_device="$T/rtc0" -o hz=64
bad "RTC that is not one" "tick rtc /dev/null: not an RTC" -o tick=rtc -o rtc_device=/dev/null -o hz=64
bad "RTC rate not a power of two" "tick rtc /dev/rtc0: hz 1000: unsupported rate" -o tick=rtc -o hz=1000
bad "RTC rate too high" "tick rtc /dev/rtc0: hz 16384: unsupported rate" -o tick=rtc -o hz=16384
bad "missing PTP clock" "source phc $T/ptp0: no such device" -o source=phc -o phc_device="$T/ptp0"
bad "PTP clock that is not one" "source phc /dev/null: not a PTP clock" -o source=phc -o phc_device=/dev/null
# tick gpio is built only with libgpiod (clockd --version lists it); a
# clockd without it says so when asked for it.
if "$CLOCKD" --version | grep -q '^ticks:.* gpio'; then
	bad "missing GPIO chip" "tick gpio $T/gpiochip9: no such GPIO chip" -o tick=gpio -o gpio_chip="$T/gpiochip9"
else
	bad "tick gpio, built without libgpiod" "tick gpio: not built into this clockd (libgpiod was missing" -o tick=gpio
fi

# Permission denied: a device node only root may open, and clockd run as
# nobody (the page in a directory nobody may write).
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null 2>&1; then
	chmod 755 "$T"
	mkdir "$T/nobody" && chmod 1777 "$T/nobody"
	mknod "$T/rtc-root" c 10 135 && chmod 600 "$T/rtc-root"
	: >"$T/dev-root" && chmod 600 "$T/dev-root"
	for d in "tick rtc:-o tick=rtc -o hz=64 -o rtc_device=$T/rtc-root" \
		"tick hpet:-o tick=hpet -o hpet_device=$T/dev-root" \
		"source phc:-o source=phc -o phc_device=$T/dev-root"; do
		what=${d%%:*}
		# shellcheck disable=SC2086 # the options are words
		timeout 20 sh -c 'setpriv --reuid=65534 --regid=65534 --clear-groups "$@"' sh \
			"$CLOCKD" -o page="$T/nobody/page" ${d#*:} >"$T/log" 2>&1
		rc=$?
		path=$(echo "${d#*:}" | sed 's/.*=//')
		grep -qF "$what $path: permission denied" "$T/log" && [ $rc -eq 1 ]
		r=$?
		ok $r "$what, permission denied: exit 1 and the message says so"
		[ $r -eq 0 ] || sed 's/^/# log: /' "$T/log"
	done
else
	for w in "tick rtc" "tick hpet" "source phc"; do
		skip "$w, permission denied: needs root and setpriv to run as nobody"
	done
fi

finish
