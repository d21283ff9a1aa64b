#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The latch torture under ThreadSanitizer (a smaller run: TSan is slow);
# tests/tsan-run.sh runs it.
TORTURE_READS=${TSAN_TORTURE_READS:-1000000}
export TORTURE_READS
exec sh "$top_srcdir/tests/tsan-run.sh" "torture" "$top_builddir/tests/page/torture-tsan"
