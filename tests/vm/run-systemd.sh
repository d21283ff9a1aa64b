#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# make check-systemd: boot Debian's kernel under qemu (TCG) on a Debian
# root file system with systemd as PID 1, install clockd there and run
# tests/vm/sd-test.sh, which shows with systemctl and journalctl what the
# units do under systemd itself; print its results as TAP
# (tests/vm/README.md, "The systemd guest").
#
# usage: run-systemd.sh SD_ARM   (tests/vm/sd-arm, built for the guest)
# Environment: top_srcdir, top_builddir; CLOCKD_VM_CACHE (fetch.sh,
# sd-rootfs.sh); CLOCKD_VM_TIMEOUT (seconds, default 600);
# CLOCKD_VM_BINDIR, CLOCKD_VM_SYSCONFDIR (the build's bindir and
# sysconfdir); CLOCKD_VM_DEBS: a directory of .debs to install in the
# guest instead of the build's make install tree.
# Exit status: 0 all passed, 1 a check failed, 77 skipped (qemu, a tool or
# the Debian archive missing), 99 the harness itself failed.
set -u

SRCDIR=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILDDIR=${top_builddir:-.}
TIMEOUT=${CLOCKD_VM_TIMEOUT:-600}
SD_ARM=$1
PREFIX=CLOCKD-VM:
LIBEXEC=usr/local/libexec/clockd-vm

skip_all() { echo "1..0 # SKIP $*"; exit 77; }

command -v qemu-system-x86_64 >/dev/null || skip_all "qemu-system-x86_64 is not installed"
for tool in cpio gzip strings mmdebstrap mkfs.ext4; do
	command -v $tool >/dev/null || skip_all "$tool is not installed"
done

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
start=$(date +%s)

if ! env=$(sh "$SRCDIR/tests/vm/fetch.sh" 2>"$T/fetch.log"); then
	sed 's/^/# /' "$T/fetch.log" | tail -n 20
	skip_all "the Debian kernel or busybox could not be fetched"
fi
eval "$env"	# CACHE, KVER
if ! env=$(sh "$SRCDIR/tests/vm/sd-rootfs.sh" 2>"$T/rootfs.log"); then
	sed 's/^/# /' "$T/rootfs.log" | tail -n 20
	skip_all "the Debian root file system could not be built (mmdebstrap, archive)"
fi
eval "$env"	# IMAGE
echo "# root file system: $IMAGE ($(($(date +%s) - start)) s to fetch or build the cache)"

bail() { echo "Bail out! $*"; exit 99; }

# The payload, laid over the root by the initramfs before systemd starts:
# clockd (the .debs, or the build's make install tree with merged /usr
# as Debian 12 has it) and the test with its unit.
P=$T/payload
mkdir -p "$P/$LIBEXEC" "$P/etc/systemd/system/multi-user.target.wants"
chmod 755 "$P"
if [ -n "${CLOCKD_VM_DEBS:-}" ] && ls "$CLOCKD_VM_DEBS"/*.deb >/dev/null 2>&1; then
	mkdir -p "$P/var/lib/clockd-vm/debs"
	cp "$CLOCKD_VM_DEBS"/*.deb "$P/var/lib/clockd-vm/debs/"
	echo "# installing in the guest: $(cd "$CLOCKD_VM_DEBS" && echo *.deb)"
	printf 'DEBS=/var/lib/clockd-vm/debs\nCLOCKCTL=/usr/bin/clockctl\nCLOCKD_CONF=/etc/clockd.conf\n' \
		> "$P/$LIBEXEC/env"
else
	D=$T/dest
	make -s -C "$BUILDDIR" install DESTDIR="$D" >"$T/install.log" 2>&1 ||
		bail "make install DESTDIR failed: $(tail -n 1 "$T/install.log")"
	for d in bin sbin lib lib64; do
		[ -d "$D/$d" ] && [ ! -L "$D/$d" ] || continue
		mkdir -p "$D/usr/$d"
		cp -a "$D/$d/." "$D/usr/$d/" && rm -rf "${D:?}/$d"
	done
	cp -a "$D/." "$P/"
	echo "# installing in the guest: make install DESTDIR (bindir ${CLOCKD_VM_BINDIR:-?})"
	printf 'DEBS=\nCLOCKCTL=%s/clockctl\nCLOCKD_CONF=%s/clockd.conf\n' \
		"${CLOCKD_VM_BINDIR:-/usr/local/bin}" "${CLOCKD_VM_SYSCONFDIR:-/usr/local/etc}" \
		> "$P/$LIBEXEC/env"
fi
cp "$SRCDIR/tests/vm/sd-test.sh" "$P/$LIBEXEC/sd-test.sh"
cp "$SD_ARM" "$P/$LIBEXEC/sd-arm"
chmod 755 "$P/$LIBEXEC/sd-test.sh" "$P/$LIBEXEC/sd-arm"
cat > "$P/etc/systemd/system/clockd-vm-test.service" <<UNIT
[Unit]
Description=clockd checks under systemd (tests/vm/sd-test.sh)
After=multi-user.target

[Service]
Type=oneshot
ExecStart=/bin/sh /$LIBEXEC/sd-test.sh
StandardOutput=tty
StandardError=journal
TTYPath=/dev/ttyS0
TTYReset=no
TTYVHangup=no
UNIT
ln -s ../clockd-vm-test.service "$P/etc/systemd/system/multi-user.target.wants/"

if ! sh "$SRCDIR/tests/vm/sd-mkinitramfs.sh" "$T/initrd.img" "$SRCDIR" "$P" \
	2>"$T/mkinitramfs.log"; then
	bail "initramfs not built: $(tail -n 1 "$T/mkinitramfs.log")"
fi

# TCG and q35 as in run.sh (tests/vm/README.md); 8 HPET timers so that
# clockd's source hpet and the clients mapping the counter each get one.
# snapshot=on: the guest's writes go to a temporary file, never the cache.
boot() {
	timeout -k 10 "$TIMEOUT" qemu-system-x86_64 -accel tcg -machine q35 -m 768M \
		-nographic -no-reboot -kernel "$CACHE/root/boot/vmlinuz-$KVER" \
		-initrd "$T/initrd.img" -nic none -global hpet.timers=8 \
		-drive file="$IMAGE",format=raw,if=virtio,snapshot=on \
		-append 'console=ttyS0 panic=-1 rdinit=/init quiet loglevel=1 systemd.show_status=0' \
		${CLOCKD_VM_QEMU_ARGS:-} </dev/null
	echo $? > "$T/qemu.rc"
}

. "$SRCDIR/tests/vm/console.sh"


boot_start=$(date +%s)
echo "# booting $KVER with systemd under qemu (TCG), timeout ${TIMEOUT}s"
boot | tap
status=$?
echo "# $(($(date +%s) - boot_start)) s from qemu start to power-off, $(($(date +%s) - start)) s in all"
exit $status
