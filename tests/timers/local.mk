# Timer data structures of the daemon: the jiffies wheel and the ns heap,
# each against its contract (unit tests, built from the daemon's sources).
check_PROGRAMS += tests/timers/wheel tests/timers/hrheap
TESTS += tests/timers/wheel tests/timers/hrheap

tests_timers_wheel_SOURCES = tests/timers/wheel.c src/clockd/wheel.c src/clockd/wheel.h
tests_timers_wheel_LDADD = tests/libtap.la
tests_timers_hrheap_SOURCES = tests/timers/hrheap.c src/clockd/hrheap.c src/clockd/hrheap.h
tests_timers_hrheap_LDADD = tests/libtap.la
