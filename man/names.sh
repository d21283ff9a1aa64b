#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# names.sh PAGE...: the names each man page documents, one a line: those
# its NAME section gives before the "\-" (man-pages(7)).
# names.sh -l PAGE...: "NAME PAGE-FILE" for each name but the page's own,
# the ".so" pages make install adds so that "man NAME" finds its group's
# page. The docs test holds these lists to the exported symbols.
links=
[ "${1-}" = -l ] && { links=1; shift; }
for page in "$@"; do
	base=${page##*/}
	sed -n '/^\.SH NAME/,/^\.SH/p' "$page" | sed '1d;$d' | paste -s -d ' ' - |
		sed 's/\\-.*//' | tr ',' '\n' | tr -d ' \t' | sed '/^$/d' |
		while read -r name; do
			if [ -z "$links" ]; then
				echo "$name"
			elif [ "$name.${base##*.}" != "$base" ]; then
				echo "$name $base"
			fi
		done
done
