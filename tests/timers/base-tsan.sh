#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# tests/timers/base under ThreadSanitizer: the base threads, the tick
# hand-off, the command queue and the statistics, with smaller runs (TSan
# is slow); tests/tsan-run.sh runs it.
BASE_EXPIRIES=${TSAN_BASE_EXPIRIES:-50000}
BASE_MANY=${TSAN_BASE_MANY:-100000}
export BASE_EXPIRIES BASE_MANY
exec sh "$top_srcdir/tests/tsan-run.sh" "timer bases" "$top_builddir/tests/timers/base-tsan"
