# Timer data structures of the daemon: the jiffies wheel and the ns heap,
# each against its contract (unit tests, built from the daemon's sources).
check_PROGRAMS += tests/timers/wheel tests/timers/hrheap
TESTS += tests/timers/wheel tests/timers/hrheap

tests_timers_wheel_SOURCES = tests/timers/wheel.c src/clockd/wheel.c src/clockd/wheel.h
tests_timers_wheel_LDADD = tests/libtap.la
tests_timers_hrheap_SOURCES = tests/timers/hrheap.c src/clockd/hrheap.c src/clockd/hrheap.h
tests_timers_hrheap_LDADD = tests/libtap.la

# The per-CPU timer bases (src/clockd/timerbase.h) against a live daemon's
# page: the bases run in the test program, which plays the client's side
# on the shared memory (tbclient.[ch]).
TIMERBASE_SOURCES = \
	src/clockd/timerbase.c src/clockd/timerbase.h src/clockd/tb_internal.h \
	src/clockd/tb_timer.c src/clockd/tb_client.c \
	src/clockd/wheel.c src/clockd/wheel.h src/clockd/hrheap.c src/clockd/hrheap.h
check_PROGRAMS += tests/timers/base
TESTS += tests/timers/base
tests_timers_base_SOURCES = tests/timers/base.c tests/timers/tbclient.c tests/timers/tbclient.h \
	$(TIMERBASE_SOURCES)
tests_timers_base_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests
tests_timers_base_LDADD = src/libclockd/libclockd.la src/shared/libshared.la tests/libtap.la -lpthread
