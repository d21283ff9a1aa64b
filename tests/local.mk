# Tests: each area keeps its own fragment.
AM_TESTS_ENVIRONMENT = top_srcdir='$(abs_top_srcdir)'; top_builddir='$(abs_top_builddir)'; export top_srcdir top_builddir;
# Every test speaks TAP: C programs (tests/tap.h) and shell scripts alike.
# A whole test that cannot run here prints "1..0 # SKIP reason".
TEST_EXTENSIONS = .sh
LOG_DRIVER = env AM_TAP_AWK='$(AWK)' $(SHELL) $(top_srcdir)/build-aux/tap-driver.sh
SH_LOG_DRIVER = $(LOG_DRIVER)
# Each test in a session of its own, with a time limit, its leftovers
# killed (build-aux/test-guard.sh).
LOG_COMPILER = /bin/sh $(top_srcdir)/build-aux/test-guard.sh
SH_LOG_COMPILER = /bin/sh $(top_srcdir)/build-aux/test-guard.sh $(SHELL)
EXTRA_DIST += build-aux/tap-driver.sh build-aux/test-guard.sh tests/tap.sh tests/clockd.sh

# The TSan variant: a build configured with --enable-tsan runs the threaded
# tests (smaller: TSan is slow); a data race fails them (TSan's exit status
# 66, reported by the TAP driver). build-aux/ci.sh runs it in build-tsan.
TSAN_TESTS = tests/page/torture tests/ring/stress tests/timers/base tests/timers/rearm tests/daemon/threads.sh
check-tsan:
if TSAN
	TORTURE_READS=1000000 RING_STRESS_RECORDS=1000000 BASE_EXPIRIES=50000 BASE_MANY=100000 REARM_N=100000 \
	TSAN_OPTIONS="halt_on_error=1 exitcode=66" \
		$(MAKE) $(AM_MAKEFLAGS) check TESTS="$(TSAN_TESTS)"
else
	@echo "check-tsan: this build is not the TSan variant (configure --enable-tsan)" >&2; exit 1
endif
.PHONY: check-tsan
check_LTLIBRARIES += tests/libtap.la
tests_libtap_la_SOURCES = tests/tap.c tests/tap.h tests/util.h

include tests/config/local.mk
include tests/clockctl/local.mk
include tests/page/local.mk
include tests/daemon/local.mk
include tests/docs/local.mk
include tests/layers/local.mk
include tests/headers/local.mk
include tests/devices/local.mk
include tests/devices-hw/local.mk
include tests/discipline/local.mk
include tests/sysref/local.mk
include tests/vm/local.mk
include tests/export/local.mk
include tests/timers/local.mk
include tests/ring/local.mk
include tests/timens/local.mk
include tests/proto/local.mk
include tests/ctlsock/local.mk
include tests/libtimers/local.mk
include tests/sleep/local.mk
include tests/stress/local.mk
include tests/service/local.mk
include tests/preload/local.mk
include tests/lifecycle/local.mk
