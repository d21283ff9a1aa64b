#!/bin/sh
# clockctl uses only libclockd's public API (README, "Architecture"): every
# file of src/clockctl includes only its own headers ("clockctl/...") and
# the public ones (<clockd/...>, which must exist under include/), never a
# header of the tree outside them (src/shared, src/libclockd, src/clockd),
# and src/clockctl/local.mk builds it from src/clockctl alone, linked to
# libclockd alone. A planted bad file checks that the check can fail.
. "$top_srcdir/tests/clockctl/lib.sh"

# bad_includes FILE...: "FILE: #include ..." for each include out of bounds.
bad_includes() {
	for f in "$@"; do
		sed -n 's/^[ \t]*#[ \t]*include[ \t]*\([<"][^>"]*[>"]\).*/\1/p' "$f" |
			while read -r inc; do
				name=${inc#?}
				name=${name%?}
				case $inc in
				\"clockctl/*)
					[ -f "$top_srcdir/src/$name" ] && continue ;;
				\<clockd/*)
					[ -f "$top_srcdir/include/$name" ] && continue ;;
				\<*)
					# A system header, unless the tree has it
					# (-I src would make <shared/log.h> work).
					[ ! -e "$top_srcdir/src/$name" ] &&
						[ ! -e "$top_srcdir/include/$name" ] && continue ;;
				esac
				echo "$f: #include $inc"
			done
	done
}

files=$(ls "$top_srcdir"/src/clockctl/*.c "$top_srcdir"/src/clockctl/*.h)
[ -n "$files" ]
ok $? "src/clockctl has sources to check"
# shellcheck disable=SC2086 # one word per file; the paths have no blanks
bad=$(bad_includes $files)
[ -z "$bad" ]
ok $? "src/clockctl includes only <clockd/*.h>, its own and system headers"
[ -z "$bad" ] || diag "$bad"

# The check itself: a file that reaches into src/shared, the library's
# internals and a made-up public header is flagged three times.
cat >"$tmp/planted.c" <<'EOC'
#include <stdio.h>
#include <clockd/clockd.h>
#include "clockctl/clockctl.h"
#include "shared/ctlproto.h"
#include <libclockd/internal.h>
#include <clockd/nonexistent.h>
EOC
[ "$(bad_includes "$tmp/planted.c" | wc -l)" -eq 3 ]
ok $? "a planted file with three internal includes is flagged three times"

# The build: src/clockctl's sources only, libclockd the only library of the
# tree it links. Continuation lines are joined first.
mk=$top_srcdir/src/clockctl/local.mk
sed -e ':a' -e '/\\$/N; s/\\\n//; ta' "$mk" >"$tmp/local.mk"
srcs=$(sed -n 's/^src_clockctl_clockctl_SOURCES *= *//p' "$tmp/local.mk" | tr ' \t' '\n\n' | sed '/^$/d')
outside=$(echo "$srcs" | grep -v '^src/clockctl/' | tr '\n' ' ')
[ -n "$srcs" ] && [ -z "$outside" ]
ok $? "clockctl is built from src/clockctl only${outside:+ (also: $outside)}"
libs=$(sed -n 's/^src_clockctl_clockctl_LDADD *= *//p' "$tmp/local.mk" | tr ' \t' '\n\n' |
	grep -E '\.la$|\.a$|^src/|^tests/' | tr '\n' ' ')
[ "$libs" = "src/libclockd/libclockd.la " ]
ok $? "clockctl links libclockd and no other library of the tree (LDADD: $libs)"
flags=$(sed -n 's/^src_clockctl_clockctl_CPPFLAGS *= *//p' "$tmp/local.mk")
case $flags in
*-I*) ok 1 "clockctl adds no include path of its own (CPPFLAGS: $flags)" ;;
*) ok 0 "clockctl adds no include path of its own" ;;
esac

finish
