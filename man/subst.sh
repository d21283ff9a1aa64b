#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# subst.sh IN NAME=VALUE...: IN, a man page source, on stdout with each
# @NAME@ replaced by VALUE. A VALUE that is a path (it starts with /) gets
# its hyphens escaped and a break point (\:) after each slash, so that a
# long installation prefix still fills and breaks lines without warnings.
set -eu
in=$1
shift
script=
for a in "$@"; do
	name=${a%%=*}
	value=${a#*=}
	case $value in
	/*) value=$(printf '%s\n' "$value" | sed 's/-/\\-/g; s|/|/\\:|g') ;;
	esac
	# As a sed replacement: \, & and the delimiter | quoted.
	value=$(printf '%s\n' "$value" | sed 's/[\\&|]/\\&/g')
	script="$script
s|@$name@|$value|g"
done
sed -e "$script" "$in"
