# libclockd-preload.so and clockctl run: unmodified programs (date, sleep,
# python3, a timer_create program) on a daemon whose clock is known to
# differ from the kernel's.
check_PROGRAMS += tests/preload/ptest
TESTS += tests/preload/preload.sh
EXTRA_DIST += tests/preload/preload.sh
tests_preload_ptest_SOURCES = tests/preload/ptest.c
tests_preload_ptest_LDADD = src/libclockd/libclockd.la -lpthread
# Issue 15: a preloaded program rides through a stopped and a restarted
# daemon, its clocks never going back (tests/preload/switch.sh).
check_PROGRAMS += tests/preload/follow
TESTS += tests/preload/switch.sh
EXTRA_DIST += tests/preload/switch.sh
tests_preload_follow_SOURCES = tests/preload/follow.c
tests_preload_follow_LDADD = src/libclockd/libclockd.la -lpthread
# Issue 26: POSIX timers, sleeps and signals under the preload, against
# the kernel's (tests/preload/posix.sh); posixprog links no libclockd.
check_PROGRAMS += tests/preload/posixprog tests/preload/deadread
TESTS += tests/preload/posix.sh
EXTRA_DIST += tests/preload/posix.sh
tests_preload_posixprog_SOURCES = tests/preload/posixprog.c
tests_preload_posixprog_LDADD = -lrt
tests_preload_deadread_SOURCES = tests/preload/deadread.c
tests_preload_deadread_LDADD = src/libclockd/libclockd.la
