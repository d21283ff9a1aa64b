# Issue 25: time namespaces (timens.sh) and steps of the date (steps.sh) as
# a client sees them.
check_PROGRAMS += tests/timens/tprobe tests/timens/offsets
TESTS += tests/timens/offsets tests/timens/timens.sh tests/timens/steps.sh
EXTRA_DIST += tests/timens/timens.sh tests/timens/steps.sh
tests_timens_tprobe_SOURCES = tests/timens/tprobe.c
tests_timens_tprobe_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests
tests_timens_tprobe_LDADD = src/libclockd/libclockd.la -lpthread
tests_timens_offsets_SOURCES = tests/timens/offsets.c
tests_timens_offsets_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)
tests_timens_offsets_LDADD = src/shared/libshared-client.la tests/libtap.la
