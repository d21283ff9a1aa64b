#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Build the guest's initramfs: busybox, the built clockd and clockctl with
# libclockd and every shared library ldd names (a private libgpiod 2.x
# among them), libgpiod 1.6's .so from Debian's package, the device check
# programs, the kernel modules the checks need (with their dependencies)
# and tests/vm/init.sh as /init.
#
# usage: mkinitramfs.sh OUTPUT TOP_SRCDIR TOP_BUILDDIR [PROGRAM...]
# Needs a cache made by fetch.sh (CLOCKD_VM_CACHE, default /var/cache/clockd-vm).
set -eu

OUT=$1 SRCDIR=$2 BUILDDIR=$3
shift 3
CACHE=${CLOCKD_VM_CACHE:-/var/cache/clockd-vm}
ROOT=$CACHE/root
KVER=$(cat "$CACHE/kver")
LIBDIR=lib/x86_64-linux-gnu
# configfs carries gpio-sim's configuration. The HPET and rtc_cmos drivers
# are built into Debian's kernel (CONFIG_HPET=y, CONFIG_RTC_DRV_CMOS=y).
# e1000e (with ptp and pps_core) gives the /dev/ptp0 of source phc;
# ptp-mock (fetch.sh) a PHC that moves and can be steered.
MODULES="configfs $CACHE/gpio-sim/gpio-sim.ko e1000e $CACHE/ptp-mock/ptp-mock.ko"
# Copied, not loaded at boot: the kernel PPS check loads it (it spins a few
# ms a second with interrupts off). No dependencies: the PPS core is built
# in (CONFIG_PPS=y).
LATE_MODULES="$CACHE/pps-hrtimer/pps-hrtimer.ko"

STAGE=$(mktemp -d)
trap 'rm -rf "$STAGE"' EXIT

# A libtool-built program: the real binary sits in .libs/.
real_binary() {
	dir=$(dirname "$1") base=$(basename "$1")
	if [ -x "$dir/.libs/$base" ]; then echo "$dir/.libs/$base"; else echo "$1"; fi
}

# The program and each library its loader would map, into $LIBDIR (the
# guest sets LD_LIBRARY_PATH to it; the loader keeps its own path).
# Libraries of the build tree are found through libtool's environment.
install_program() {
	bin=$(real_binary "$1")
	cp "$bin" "$STAGE/bin/$(basename "$1")"
	"$BUILDDIR/libtool" --mode=execute ldd "$1" 2>/dev/null |
		sed -n 's/.*=> \(\/[^ ]*\) .*/\1/p; s/^[[:space:]]*\(\/[^ ]*\) (.*/\1/p' |
	while read -r lib; do
		case $lib in
		*/ld-linux*) cp -L "$lib" "$STAGE/lib64/" ;;
		*) cp -L "$lib" "$STAGE/$LIBDIR/" ;;
		esac
	done
}

# module_path, add_module
. "$SRCDIR/tests/vm/modules.sh"

main() {
	mkdir -p "$STAGE/bin" "$STAGE/lib64" "$STAGE/$LIBDIR" "$STAGE/lib/modules" \
		"$STAGE/proc" "$STAGE/sys" "$STAGE/dev" "$STAGE/run" "$STAGE/tmp"
	: > "$STAGE/lib/modules/order"
	cp "$ROOT/bin/busybox" "$STAGE/bin/busybox"
	install_program "$BUILDDIR/src/clockd/clockd"
	install_program "$BUILDDIR/src/clockctl/clockctl"
	for prog in "$@"; do
		install_program "$prog"
	done
	# The guest's libgpiod 1.6 is Debian's package, not the host's copy. A
	# build on a private libgpiod 2.x (build-aux/ci.sh) gets its
	# libgpiod.so.3 from ldd above (clockd's and gpio-check's run path).
	cp -P "$ROOT/usr/$LIBDIR"/libgpiod.so.* "$STAGE/$LIBDIR/"
	# chrony, the anchor of the kernel PPS check, when the host has it:
	# the host's binaries and libraries, run as root (chronyd looks the
	# user up: an /etc/passwd; glibc reads it without an NSS module).
	mkdir -p "$STAGE/etc"
	echo 'root:x:0:0:root:/:/bin/sh' > "$STAGE/etc/passwd"
	echo 'root:x:0:' > "$STAGE/etc/group"
	for prog in chronyd chronyc; do
		path=$(PATH=/usr/sbin:/sbin:$PATH command -v $prog) && install_program "$path"
	done
	for m in $MODULES; do
		add_module "$m"
	done
	for m in $LATE_MODULES; do
		cp "$m" "$STAGE/lib/modules/"
	done
	cp "$SRCDIR/tests/vm/init.sh" "$STAGE/init"
	chmod 755 "$STAGE/init"
	(cd "$STAGE" && find . | cpio -o -H newc -R 0:0 --quiet) | gzip -1 > "$OUT"
}

main "$@"
