# libclockd-preload.so and clockctl run: unmodified programs (date, sleep,
# python3, a timer_create program) on a daemon whose clock is known to
# differ from the kernel's.
check_PROGRAMS += tests/preload/ptest
TESTS += tests/preload/preload.sh
EXTRA_DIST += tests/preload/preload.sh
tests_preload_ptest_SOURCES = tests/preload/ptest.c
tests_preload_ptest_LDADD = src/libclockd/libclockd.la -lpthread
