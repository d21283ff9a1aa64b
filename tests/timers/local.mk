# Timer data structures of the daemon: the jiffies wheel and the ns heap,
# each against its contract (unit tests, built from the daemon's sources).
check_PROGRAMS += tests/timers/wheel tests/timers/hrheap
TESTS += tests/timers/wheel tests/timers/hrheap

tests_timers_wheel_SOURCES = tests/timers/wheel.c
tests_timers_wheel_LDADD = src/clockd/libclockd-daemon.la tests/libtap.la
tests_timers_hrheap_SOURCES = tests/timers/hrheap.c
tests_timers_hrheap_LDADD = src/clockd/libclockd-daemon.la tests/libtap.la

# The raised lead of a self-waking client (src/clockd/timers/wakelead.h):
# the streaming 99th percentile of a base's round lateness, and the lead.
check_PROGRAMS += tests/timers/wakelead
TESTS += tests/timers/wakelead
tests_timers_wakelead_SOURCES = tests/timers/wakelead.c
tests_timers_wakelead_LDADD = tests/libtap.la -lm

# The per-CPU timer bases (src/clockd/timers/timerbase.h) on a fake clock
# (no daemon): the bases run in the test program, which plays the client's
# side on the shared memory (tbclient.[ch]). Under the TSan variant
# (configure --enable-tsan, make check-tsan) with smaller runs.
check_PROGRAMS += tests/timers/base
TESTS += tests/timers/base
tests_timers_base_SOURCES = tests/timers/base.c tests/timers/tbclient.c tests/timers/tbclient.h
tests_timers_base_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests
tests_timers_base_LDADD = src/clockd/libclockd-daemon.la tests/libtap.la -lpthread

# Missed wake-ups: arm, cancel and re-arm races at one deadline, REARM_N
# iterations (1000000; the TSan variant runs fewer) through the bases on
# the kernel's clock and on one running slow (tests/timers/rearm.c).
check_PROGRAMS += tests/timers/rearm
TESTS += tests/timers/rearm
tests_timers_rearm_SOURCES = tests/timers/rearm.c tests/timers/tbclient.c tests/timers/tbclient.h
tests_timers_rearm_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests
tests_timers_rearm_LDADD = src/clockd/libclockd-daemon.la tests/libtap.la -lpthread
