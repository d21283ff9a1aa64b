#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# make check-hw: boot Debian's own kernel under qemu (TCG) with a busybox
# initramfs holding clockd and the device checks, and print the guest's
# results as TAP. The build machine's kernel has no HPET, RTC or GPIO
# device; this one does (see tests/vm/README.md).
#
# usage: run.sh [PROGRAM...]   (device check programs for the guest's /bin)
# Environment: top_srcdir, top_builddir; CLOCKD_VM_CACHE (fetch.sh);
# CLOCKD_VM_TIMEOUT (seconds, default 600); CLOCKD_VM_QEMU_ARGS (more qemu
# options, split on spaces, e.g. "-cpu max" or "-device e1000e");
# CLOCKD_VM_CHECKS=gpio runs only the gpio checks, =leap only the leap
# second's, =kpps only the kernel PPS one, =hotplug only the CPU hotplug
# test (tests/lifecycle/hotplug, in a guest of 2 CPUs; default: all);
# CLOCKD_VM_GPIOD=v1|v2 makes the guest check that clockd runs that
# libgpiod API (CI's second build, on libgpiod 2.x).
set -u

SRCDIR=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILDDIR=${top_builddir:-.}
TIMEOUT=${CLOCKD_VM_TIMEOUT:-600}
PREFIX=CLOCKD-VM:

skip_all() { echo "1..0 # SKIP $*"; exit 0; }

command -v qemu-system-x86_64 >/dev/null || skip_all "qemu-system-x86_64 is not installed"
for tool in cpio gzip strings; do
	command -v $tool >/dev/null || skip_all "$tool is not installed"
done

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

if ! env=$(sh "$SRCDIR/tests/vm/fetch.sh" 2>"$T/fetch.log"); then
	sed 's/^/# /' "$T/fetch.log" | tail -n 20
	skip_all "the Debian kernel, busybox or gpio-sim could not be fetched or built"
fi
eval "$env"	# CACHE, KVER

if ! sh "$SRCDIR/tests/vm/mkinitramfs.sh" "$T/initrd.img" "$SRCDIR" "$BUILDDIR" "$@" \
	2>"$T/mkinitramfs.log"; then
	echo "Bail out! initramfs not built: $(tail -n 1 "$T/mkinitramfs.log")"
	exit 99
fi

# Read by the guest's /init from /proc/cmdline.
CMDLINE= SMP=1
case ${CLOCKD_VM_CHECKS:-all} in
all) ;;
gpio|leap|kpps) CMDLINE=" clockd.checks=$CLOCKD_VM_CHECKS" ;;
# A CPU to take offline; TCG runs both on one host thread (thread=single),
# as every other guest here.
hotplug) CMDLINE=" clockd.checks=hotplug" SMP=2 ;;
*) echo "Bail out! CLOCKD_VM_CHECKS is all, gpio, leap, kpps or hotplug, not $CLOCKD_VM_CHECKS"; exit 99 ;;
esac
case ${CLOCKD_VM_GPIOD:-} in
'') ;;
v1|v2) CMDLINE="$CMDLINE clockd.gpiod=$CLOCKD_VM_GPIOD" ;;
*) echo "Bail out! CLOCKD_VM_GPIOD is v1 or v2, not $CLOCKD_VM_GPIOD"; exit 99 ;;
esac

# KVM does not boot a stock kernel on these hosts (tests/vm/README.md):
# TCG always. q35, because its HPET can route timer interrupts. One e1000e
# NIC (no network behind it) for its PTP clock, /dev/ptp0. 8 HPET timers,
# not 3: the kernel keeps two, and every open of /dev/hpet takes one for as
# long as its file (or a mapping of it) lives: clockd's source hpet and each
# client mapping the counter need their own.
boot() {
	timeout -k 10 "$TIMEOUT" qemu-system-x86_64 -accel tcg,thread=single -smp "$SMP" -machine q35 -m 512M \
		-nographic -no-reboot -kernel "$CACHE/root/boot/vmlinuz-$KVER" \
		-initrd "$T/initrd.img" -nic none -device e1000e \
		-global hpet.timers=8 \
		-append "console=ttyS0 panic=-1 rdinit=/init quiet$CMDLINE" \
		${CLOCKD_VM_QEMU_ARGS:-} </dev/null
	echo $? > "$T/qemu.rc"
}

. "$SRCDIR/tests/vm/console.sh"


start=$(date +%s)
echo "# booting $KVER under qemu (TCG), timeout ${TIMEOUT}s"
boot | tap
status=$?
echo "# $(($(date +%s) - start)) s from qemu start to power-off"
exit $status
