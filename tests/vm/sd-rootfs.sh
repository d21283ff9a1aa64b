#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The systemd guest's root file system (make check-systemd): a Debian root
# with systemd as PID 1 and the libraries clockd links against, made by
# mmdebstrap from the Debian archive this machine's apt uses, as an ext4
# image cached in the cache directory under a name holding the hash of
# this script (which holds the package list): editing either rebuilds it.
# The image is never written to: qemu runs it with snapshot=on.
#
# usage: sd-rootfs.sh   (prints IMAGE=path on stdout; progress on stderr)
# Exits non-zero when mmdebstrap is missing or the archive is unreachable.
set -eu

CACHE=${CLOCKD_VM_CACHE:-/var/cache/clockd-vm}
# minbase (Priority: required, with passwd, util-linux's setpriv, mawk)
# plus systemd and clockd's run-time libraries, and Debian's chrony as
# packaged (with procps for ps); no kernel (the harness boots the one
# fetch.sh extracted) and no network.
PACKAGES="systemd systemd-sysv udev libsystemd0 libevent-2.1-7
libevent-pthreads-2.1-7 libjson-c5 libgpiod2 libcap2 chrony procps"
SIZE=1G

say() { echo "sd-rootfs: $*" >&2; }

# The Debian entries of apt's own sources: the active .list/.sources
# files naming the Debian archive (another vendor's repository would need
# its key inside the chroot).
apt_sources() {
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
		/etc/apt/sources.list.d/*.sources; do
		[ -s "$f" ] || continue
		grep -Eqs 'debian\.org|debian-archive-keyring' "$f" && echo "$f"
	done
}

main() {
	command -v mmdebstrap >/dev/null || { say "mmdebstrap is not installed"; exit 1; }
	command -v mkfs.ext4 >/dev/null || { say "mkfs.ext4 is not installed"; exit 1; }
	suite=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
	[ -n "$suite" ] || { say "no VERSION_CODENAME in /etc/os-release"; exit 1; }
	key=$( { cat "$0"; echo "$suite"; } | sha256sum | cut -c1-16)
	img=$CACHE/systemd-root-$key.img
	if [ -s "$img" ]; then
		echo "IMAGE=$img"
		return 0
	fi
	sources=$(apt_sources)
	[ -n "$sources" ] || { say "apt has no Debian archive in its sources"; exit 1; }
	mkdir -p "$CACHE"
	tmp=$(mktemp -d "$CACHE/.systemd-root.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	say "building a $suite root with mmdebstrap from: $(echo $sources)"
	# The customize hook, in the finished tree ($1): a fixed machine-id
	# (an empty one would make every boot a first boot, presetting all
	# units), no login prompt on the serial console the results travel
	# on, no apt timers.
	# shellcheck disable=SC2086
	mmdebstrap --variant=minbase --quiet \
		--include="$(echo $PACKAGES | tr ' ' ,)" \
		--customize-hook='echo 0c10cd0c10cd0c10cd0c10cd0c10cd00 > "$1/etc/machine-id"' \
		--customize-hook='echo clockd-vm > "$1/etc/hostname"' \
		--customize-hook='for u in serial-getty@ttyS0.service getty@tty1.service apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer fstrim.timer; do ln -sf /dev/null "$1/etc/systemd/system/$u"; done' \
		--customize-hook='rm -rf "$1/var/cache/apt/archives/"*.deb "$1/var/lib/apt/lists/"*_Packages' \
		"$suite" "$tmp/root" $sources >&2
	say "making the ext4 image ($SIZE, sparse)"
	mkfs.ext4 -q -F -L clockd-root -d "$tmp/root" "$tmp/root.img" "$SIZE" >&2
	mv "$tmp/root.img" "$img"
	# Images of older package lists or scripts.
	for old in "$CACHE"/systemd-root-*.img; do
		[ "$old" = "$img" ] || rm -f "$old"
	done
	echo "IMAGE=$img"
}

main "$@"
