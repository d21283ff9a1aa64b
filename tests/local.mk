# Tests: each area keeps its own fragment.
AM_TESTS_ENVIRONMENT = top_srcdir='$(abs_top_srcdir)'; top_builddir='$(abs_top_builddir)'; export top_srcdir top_builddir;
# Every test speaks TAP: C programs (tests/tap.h) and shell scripts alike.
# A whole test that cannot run here prints "1..0 # SKIP reason".
TEST_EXTENSIONS = .sh
LOG_DRIVER = env AM_TAP_AWK='$(AWK)' $(SHELL) $(top_srcdir)/build-aux/tap-driver.sh
SH_LOG_DRIVER = $(LOG_DRIVER)
SH_LOG_COMPILER = $(SHELL)
EXTRA_DIST += build-aux/tap-driver.sh
# The runner of the programs built with -fsanitize=thread (the *-tsan.sh).
EXTRA_DIST += tests/tsan-run.sh
check_LTLIBRARIES += tests/libtap.la
tests_libtap_la_SOURCES = tests/tap.c tests/tap.h

include tests/config/local.mk
include tests/clockctl/local.mk
include tests/page/local.mk
include tests/daemon/local.mk
include tests/docs/local.mk
include tests/headers/local.mk
include tests/devices/local.mk
include tests/devices-hw/local.mk
include tests/discipline/local.mk
include tests/vm/local.mk
include tests/export/local.mk
include tests/timers/local.mk
include tests/ring/local.mk
include tests/proto/local.mk
include tests/ctlsock/local.mk
include tests/libtimers/local.mk
include tests/sleep/local.mk
include tests/stress/local.mk
include tests/service/local.mk
include tests/preload/local.mk
