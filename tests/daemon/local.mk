# Daemon and library behaviour: exact tick arithmetic, the live daemon's
# jiffies, the 32-bit wrap, restart continuity, and libclockd's errno.
check_PROGRAMS += tests/daemon/tickmath tests/daemon/errno tests/daemon/probe tests/daemon/ordering
TESTS += tests/daemon/tickmath tests/daemon/errno \
	tests/daemon/hz.sh tests/daemon/wrap.sh tests/daemon/restart.sh \
	tests/daemon/alarm.sh tests/daemon/wallstep.sh tests/daemon/ordering.sh
EXTRA_DIST += tests/daemon/common.sh \
	tests/daemon/hz.sh tests/daemon/wrap.sh tests/daemon/restart.sh \
	tests/daemon/alarm.sh tests/daemon/wallstep.sh tests/daemon/ordering.sh

tests_daemon_ordering_SOURCES = tests/daemon/ordering.c
tests_daemon_ordering_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests
tests_daemon_ordering_LDADD = src/libclockd/libclockd.la tests/libtap.la -lpthread

# The LD_PRELOAD traps of alarm.sh and wallstep.sh (a shared object, built
# for the tests only).
check_LTLIBRARIES += tests/daemon/trap-preload.la
tests_daemon_trap_preload_la_SOURCES = tests/daemon/trap-preload.c
tests_daemon_trap_preload_la_LDFLAGS = -module -avoid-version -shared -rpath /nowhere
tests_daemon_trap_preload_la_LIBADD = -ldl

tests_daemon_tickmath_SOURCES = tests/daemon/tickmath.c
tests_daemon_tickmath_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests
tests_daemon_tickmath_LDADD = src/shared/libshared.la tests/libtap.la

tests_daemon_errno_SOURCES = tests/daemon/errno.c
tests_daemon_errno_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests \
	-DCLOCKD_PATH='"$(abs_top_builddir)/src/clockd/clockd"'
tests_daemon_errno_LDADD = src/libclockd/libclockd.la src/shared/libshared.la tests/libtap.la

tests_daemon_probe_SOURCES = tests/daemon/probe.c
tests_daemon_probe_LDADD = src/libclockd/libclockd.la src/shared/libshared.la

# Readers through a stopped daemon (issue #15): stall.sh stops it for
# 300 ms and 3 s (within the extrapolation bound), beyond.sh past a 1 s
# bound; tests/stress/busy.sh runs the readers beside a busy loop per CPU.
check_PROGRAMS += tests/daemon/stall
tests_daemon_stall_SOURCES = tests/daemon/stall.c
tests_daemon_stall_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests
tests_daemon_stall_LDADD = src/libclockd/libclockd.la tests/libtap.la -lpthread
TESTS += tests/daemon/stall.sh tests/daemon/beyond.sh
EXTRA_DIST += tests/daemon/stall.sh tests/daemon/beyond.sh

# threads.sh: the daemon's main, tick and reference threads through
# faults and fallbacks; under the TSan variant (make check-tsan) TSan must
# report nothing.
TESTS += tests/daemon/threads.sh
EXTRA_DIST += tests/daemon/threads.sh

# sigmask.sh: a daemon started with its stop signals blocked still stops.
TESTS += tests/daemon/sigmask.sh
EXTRA_DIST += tests/daemon/sigmask.sh
# journal.sh: events reach the journal with MESSAGE_ID and CLOCKD_* fields.
TESTS += tests/daemon/journal.sh
EXTRA_DIST += tests/daemon/journal.sh
