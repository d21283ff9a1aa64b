#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The two-thread ring stress under ThreadSanitizer (1e6 records: TSan is
# slow); tests/tsan-run.sh runs it.
RING_STRESS_RECORDS=${TSAN_RING_RECORDS:-1000000}
export RING_STRESS_RECORDS
exec sh "$top_srcdir/tests/tsan-run.sh" "ring stress (threads)" "$top_builddir/tests/ring/stress-tsan" threads
