#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# cppcheck on the whole tree (src, tests, bench, examples), with the
# checks that find bugs (warning, portability) and the suppressions below,
# each justified. Exit status 1 on any finding. Run by build-aux/ci.sh test.
set -eu
cd "$(dirname "$0")/.."
if ! command -v cppcheck >/dev/null 2>&1; then
	echo "cppcheck.sh: cppcheck not installed" >&2
	exit 77
fi
# Suppressions:
#  uninitvar:src/clockd/timers/wheel.c  radix_by_expires() writes head[d] through
#      tail[d] (which points at it) before reading it whenever tail[d] moved;
#      cppcheck does not follow the write through the pointer.
#  nullPointerRedundantCheck:tests/*  the tests check a pointer, then call
#      tap_bail(), declared noreturn with an attribute cppcheck ignores.
#  nullPointerRedundantCheck:src/clockd/main.c  the same with fatalx()
#      (noreturn) after a failed getpwnam()/getgrnam().
#  internalAstError:src/libclockd/preload.c  cppcheck's parser cannot build
#      the tree of REAL(), a cast to __typeof__ of a struct member; the
#      file is otherwise checked (gcc -Wall -Wextra -Werror builds it).
#  missingIncludeSystem  the system headers are not cppcheck's to read.
exec cppcheck -q --std=c11 --enable=warning,portability --inline-suppr --error-exitcode=1 \
	-D__GNUC__ -D_GNU_SOURCE -DSYSCONFDIR='"/etc"' -DPACKAGE_VERSION='"0"' \
	-Iinclude -Isrc -I. \
	--suppress=uninitvar:src/clockd/timers/wheel.c \
	--suppress='nullPointerRedundantCheck:tests/*' \
	--suppress=nullPointerRedundantCheck:src/clockd/main.c \
	--suppress=internalAstError:src/libclockd/preload.c \
	--suppress=missingIncludeSystem \
	src tests bench examples
