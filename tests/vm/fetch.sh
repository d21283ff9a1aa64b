#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Fetch and prepare everything the guest needs, once, into a cache outside
# the source tree: Debian's current 6.1 kernel, busybox, libgpiod, a
# gpio-sim module built out of tree (Debian's kernel does not ship one), and
# a moving PHC: Linux 6.12's ptp_mock (from linux-source-6.12) built out of
# tree for 6.1 with ptp-mock-init.c, which makes one clock at load; a
# kernel PPS source of our own (pps-hrtimer.c).
# Every step checks for its result first, so a warm run touches nothing.
# Prints the cache's environment (KVER=..., CACHE=...) on stdout last;
# progress goes to stderr. Exits non-zero when something cannot be fetched.
set -eu

CACHE=${CLOCKD_VM_CACHE:-/var/cache/clockd-vm}
DEBS=$CACHE/debs
ROOT=$CACHE/root	# every package extracted here, nothing installed
GPIOSIM=$CACHE/gpio-sim
PTPMOCK=$CACHE/ptp-mock
PPSVM=$CACHE/pps-hrtimer
HERE=$(cd "$(dirname "$0")" && pwd)

say() { echo "fetch: $*" >&2; }

# The kernel is pinned by the first run: a cache keeps the kernel it was
# built for (the module must match it). Remove the cache to move on.
kernel_version() {
	if [ -s "$CACHE/kver" ]; then
		cat "$CACHE/kver"
		return
	fi
	apt-cache depends linux-image-amd64 2>/dev/null |
		sed -n 's/^ *Depends: linux-image-\(6\.1\.[0-9]*-[0-9]*-amd64\)$/\1/p' |
		head -n 1
}

# apt-get download into $DEBS, unless a .deb of that package is there.
# A stale package list (the mirror dropped the version) gets one update.
download() {
	pkg=$1
	set -- "$DEBS/${pkg}"_*.deb
	[ -e "$1" ] && return 0
	say "downloading $pkg"
	(cd "$DEBS" && apt-get download -q -o APT::Sandbox::User=root "$pkg" >&2) && return 0
	say "apt-get update, then retrying $pkg"
	apt-get update -q >&2
	(cd "$DEBS" && apt-get download -q -o APT::Sandbox::User=root "$pkg" >&2)
}

extract() {
	pkg=$1
	[ -e "$ROOT/.done-$pkg" ] && return 0
	say "extracting $pkg"
	# A .deb cut short by an interrupted download is fetched again next time.
	dpkg-deb -x "$DEBS/${pkg}"_*.deb "$ROOT" || { rm -f "$DEBS/${pkg}"_*.deb; return 1; }
	touch "$ROOT/.done-$pkg"
}

# The three files gpio-sim needs from the 140 MB source tarball.
gpio_sim_sources() {
	[ -e "$GPIOSIM/Kbuild" ] && return 0	# written last
	say "extracting gpio-sim sources from linux-source-6.1"
	mkdir -p "$GPIOSIM"
	tar -xJf "$ROOT/usr/src/linux-source-6.1.tar.xz" -C "$GPIOSIM" \
		--strip-components=3 \
		linux-source-6.1/drivers/gpio/gpio-sim.c \
		linux-source-6.1/drivers/gpio/gpiolib.h \
		linux-source-6.1/kernel/irq/irq_sim.c
	# irq_to_desc() is not exported to modules; generic_handle_irq()
	# does the same lookup and call and is exported.
	sed -i 's/handle_simple_irq(irq_to_desc(\([a-z_]*\)))/generic_handle_irq(\1)/' \
		"$GPIOSIM/irq_sim.c"
	grep -q 'generic_handle_irq(' "$GPIOSIM/irq_sim.c" || {
		say "irq_sim.c: the handle_simple_irq(irq_to_desc()) call was not found"
		return 1
	}
	# A module built from several objects cannot have one named like it.
	mv "$GPIOSIM/gpio-sim.c" "$GPIOSIM/gpio-sim-main.c"
	printf 'obj-m := gpio-sim.o\ngpio-sim-y := gpio-sim-main.o irq_sim.o\n' \
		> "$GPIOSIM/Kbuild"
}

# The headers package includes the -common tree by its absolute
# /usr/src path; point it at the extracted copy.
fix_headers() {
	hdr=$ROOT/usr/src/linux-headers-$KVER
	sed -i "s|^include /usr/src/|include $ROOT/usr/src/|" "$hdr/Makefile"
}

build_gpio_sim() {
	[ -e "$GPIOSIM/gpio-sim.ko" ] && return 0
	fix_headers
	say "building gpio-sim.ko for $KVER"
	make -s -C "$ROOT/usr/src/linux-headers-$KVER" M="$GPIOSIM" modules >&2
}

# drivers/ptp/ptp_mock.c and its header from the 6.12 source tarball. Against 6.1 it
# builds as it is; its header declares the functions only when the
# kernel's config has the driver, which the Kbuild says.
ptp_mock_sources() {
	[ -e "$PTPMOCK/Kbuild" ] && return 0	# written last
	say "extracting ptp_mock sources from linux-source-6.12"
	mkdir -p "$PTPMOCK"
	tar -xJf "$ROOT/usr/src/linux-source-6.12.tar.xz" -C "$PTPMOCK" --strip-components=3 \
		linux-source-6.12/drivers/ptp/ptp_mock.c linux-source-6.12/include/linux/ptp_mock.h
	sed -i 's|#include <linux/ptp_mock.h>|#include "ptp_mock.h"|' "$PTPMOCK/ptp_mock.c"
	mv "$PTPMOCK/ptp_mock.c" "$PTPMOCK/mock-phc.c"
	printf '%s\n' 'obj-m := ptp-mock.o' 'ptp-mock-y := mock-phc.o ptp-mock-init.o' \
		'ccflags-y := -DCONFIG_PTP_1588_CLOCK_MOCK_MODULE=1' > "$PTPMOCK/Kbuild"
}

build_ptp_mock() {
	# The init file is ours: a changed one is built again.
	if ! cmp -s "$HERE/ptp-mock-init.c" "$PTPMOCK/ptp-mock-init.c"; then
		cp "$HERE/ptp-mock-init.c" "$PTPMOCK/ptp-mock-init.c"
		rm -f "$PTPMOCK/ptp-mock.ko"
	fi
	[ -e "$PTPMOCK/ptp-mock.ko" ] && return 0
	fix_headers
	say "building ptp-mock.ko for $KVER"
	make -s -C "$ROOT/usr/src/linux-headers-$KVER" M="$PTPMOCK" modules >&2
}

# The guest's kernel PPS source (pps-hrtimer.c, ours): rebuilt when the
# source changes.
build_pps_hrtimer() {
	mkdir -p "$PPSVM"
	if ! cmp -s "$HERE/pps-hrtimer.c" "$PPSVM/pps-hrtimer.c"; then
		cp "$HERE/pps-hrtimer.c" "$PPSVM/pps-hrtimer.c"
		echo 'obj-m := pps-hrtimer.o' > "$PPSVM/Kbuild"
		rm -f "$PPSVM/pps-hrtimer.ko"
	fi
	[ -e "$PPSVM/pps-hrtimer.ko" ] && return 0
	fix_headers
	say "building pps-hrtimer.ko for $KVER"
	make -s -C "$ROOT/usr/src/linux-headers-$KVER" M="$PPSVM" modules >&2
}

main() {
	mkdir -p "$DEBS" "$ROOT"
	KVER=$(kernel_version)
	if [ -z "$KVER" ]; then
		apt-get update -q >&2
		KVER=$(kernel_version)
	fi
	[ -n "$KVER" ] || { say "no linux-image-6.1.0-*-amd64 known to apt"; exit 1; }
	echo "$KVER" > "$CACHE/kver"
	for pkg in "linux-image-$KVER" "linux-headers-$KVER" \
		"linux-headers-${KVER%-amd64}-common" linux-kbuild-6.1 \
		linux-source-6.1 linux-source-6.12 busybox-static libgpiod2; do
		download "$pkg"
		extract "$pkg"
	done
	gpio_sim_sources
	build_gpio_sim
	ptp_mock_sources
	build_ptp_mock
	build_pps_hrtimer
	echo "CACHE=$CACHE"
	echo "KVER=$KVER"
}

main "$@"
