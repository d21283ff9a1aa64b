# SPDX-License-Identifier: LGPL-2.1-or-later
# Kernel modules for a guest's initramfs, sourced by mkinitramfs.sh and
# sd-mkinitramfs.sh. Needs ROOT (the extracted packages), KVER and STAGE
# (the initramfs tree, with lib/modules/order).

# Path of a module by name (dashes and underscores are the same to kmod).
module_path() {
	case $1 in /*) echo "$1"; return ;; esac
	find "$ROOT/lib/modules/$KVER/kernel" \( -name "$1.ko" \
		-o -name "$(echo "$1" | tr _ -).ko" -o -name "$(echo "$1" | tr - _).ko" \) |
		head -n 1
}

# Append MODULE to the load order after its depends= (no modules.dep in
# the package: the modinfo string inside each .ko is the source).
add_module() {
	local path name dep	# recursive: its own copies

	path=$(module_path "$1")
	[ -n "$path" ] || { echo "mkinitramfs: module $1 not found" >&2; return 1; }
	name=$(basename "$path" .ko)
	grep -qx "$name" "$STAGE/lib/modules/order" && return 0
	for dep in $(strings -a "$path" | sed -n 's/^depends=//p' | tr , ' '); do
		add_module "$dep"
	done
	cp "$path" "$STAGE/lib/modules/$name.ko"
	echo "$name" >> "$STAGE/lib/modules/order"
}
