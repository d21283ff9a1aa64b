# The system reference (reference = system): CLOCKD_REALTIME and
# CLOCKD_MONOTONIC follow the kernel's clocks through slews (slew.sh: an
# adjtimex frequency change; chrony.sh: chronyd slewing the kernel to a
# local server) and steps (slew.sh); follow.c measures it.
check_PROGRAMS += tests/sysref/follow
TESTS += tests/sysref/slew.sh tests/sysref/chrony.sh
EXTRA_DIST += tests/sysref/slew.sh tests/sysref/chrony.sh tests/sysref/common.sh

tests_sysref_follow_SOURCES = tests/sysref/follow.c
tests_sysref_follow_LDADD = src/libclockd/libclockd.la
