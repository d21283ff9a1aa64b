# clockd_clock_nanosleep and the ndelay/udelay/mdelay delays.
check_PROGRAMS += tests/sleep/sleep
TESTS += tests/sleep/sleep.sh
EXTRA_DIST += tests/sleep/sleep.sh
tests_sleep_sleep_SOURCES = tests/sleep/sleep.c
tests_sleep_sleep_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests
tests_sleep_sleep_LDADD = src/libclockd/libclockd.la tests/libtap.la -lpthread
