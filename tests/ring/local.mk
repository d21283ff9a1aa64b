# The shared-memory ring (src/shared/ring.c): its contract on one thread,
# hostile headers and counters; two threads and two processes passing 1e7
# records with the eventfd wake-up (under the TSan variant too: make
# check-tsan).
check_PROGRAMS += tests/ring/basic tests/ring/stress
TESTS += tests/ring/basic tests/ring/stress

tests_ring_basic_SOURCES = tests/ring/basic.c
tests_ring_basic_LDADD = src/shared/libshared.la tests/libtap.la
tests_ring_stress_SOURCES = tests/ring/stress.c
tests_ring_stress_LDADD = src/shared/libshared.la tests/libtap.la -lpthread
