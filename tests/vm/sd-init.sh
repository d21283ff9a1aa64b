#!/bin/busybox sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# /init of the systemd guest's initramfs (tests/vm/sd-mkinitramfs.sh):
# load the disk's modules, mount the root image (qemu's snapshot=on keeps
# the cached image unchanged), add /payload to it (the clockd install and
# the test; owners and modes kept), then hand over to systemd as PID 1.
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
echo 1 > /proc/sys/kernel/printk

fail() {
	echo "CLOCKD-VM: Bail out! initramfs: $*"
	poweroff -f
}

while read -r m; do
	insmod "/lib/modules/$m.ko" || fail "insmod $m"
done < /lib/modules/order
i=0
while [ ! -b /dev/vda ] && [ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
mount -t ext4 /dev/vda /newroot || fail "cannot mount /dev/vda"
tar -C /payload -cf - . | tar -C /newroot -xpf - || fail "cannot add the payload"
umount /proc /sys
mount --move /dev /newroot/dev
exec switch_root /newroot /sbin/init
