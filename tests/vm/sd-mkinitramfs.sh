#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The systemd guest's initramfs: busybox, the modules that reach the root
# disk (virtio-blk on PCI, ext4; Debian builds them as modules), the files
# to add to the root file system before systemd starts, and
# tests/vm/sd-init.sh as /init.
#
# usage: sd-mkinitramfs.sh OUTPUT TOP_SRCDIR PAYLOAD_DIR
# Needs a cache made by fetch.sh (CLOCKD_VM_CACHE, default /var/cache/clockd-vm).
set -eu

OUT=$1 SRCDIR=$2 PAYLOAD=$3
CACHE=${CLOCKD_VM_CACHE:-/var/cache/clockd-vm}
ROOT=$CACHE/root
KVER=$(cat "$CACHE/kver")
# ext4 asks the crypto API for crc32c, which the initramfs cannot modprobe.
MODULES="virtio_pci virtio_blk crc32c_generic ext4"

STAGE=$(mktemp -d)
trap 'rm -rf "$STAGE"' EXIT

# module_path, add_module
. "$SRCDIR/tests/vm/modules.sh"

mkdir -p "$STAGE/bin" "$STAGE/lib/modules" "$STAGE/proc" "$STAGE/sys" \
	"$STAGE/dev" "$STAGE/newroot"
: > "$STAGE/lib/modules/order"
cp "$ROOT/bin/busybox" "$STAGE/bin/busybox"
for m in $MODULES; do
	add_module "$m"
done
cp -a "$PAYLOAD" "$STAGE/payload"
cp "$SRCDIR/tests/vm/sd-init.sh" "$STAGE/init"
chmod 755 "$STAGE/init"
(cd "$STAGE" && find . | cpio -o -H newc --quiet) | gzip -1 > "$OUT"
