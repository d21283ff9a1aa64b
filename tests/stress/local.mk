# Adversarial reliability (issue #8): crash and restart under load,
# forgery, resource exhaustion, valgrind. Each test starts its own clockd
# on a private page. STRESS_LONG=1 makes the long forms.
check_PROGRAMS += tests/stress/crashload
TESTS += tests/stress/crashload
tests_stress_crashload_SOURCES = tests/stress/crashload.c tests/libtimers/daemon.c tests/libtimers/daemon.h
tests_stress_crashload_LDADD = tests/libtap.la src/libclockd/libclockd.la -lpthread
check_PROGRAMS += tests/stress/holdconn
tests_stress_holdconn_SOURCES = tests/stress/holdconn.c
TESTS += tests/stress/forgery.sh tests/stress/exhaust.sh tests/stress/valgrind.sh
EXTRA_DIST += tests/stress/forgery.sh tests/stress/exhaust.sh tests/stress/valgrind.sh
# Flood and quotas: four attackers against a well-behaved client
# (flood.sh; bench/run.sh runs the same program for the latency figures).
check_PROGRAMS += tests/stress/flood
tests_stress_flood_SOURCES = tests/stress/flood.c
tests_stress_flood_LDADD = src/libclockd/libclockd.la src/shared/libshared.la -lpthread
TESTS += tests/stress/flood.sh
EXTRA_DIST += tests/stress/flood.sh
