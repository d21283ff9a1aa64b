# The discipline against the simulated 1 PPS (sim.sh; outliers.sh with late
# pulses; bad.sh a bad reference; holdover.sh a late pulse before a stall),
# with the simulation's truth (truth.c) to measure the clock's real error;
# bound.sh the error bound against that truth (bound.c).
check_PROGRAMS += tests/discipline/truth tests/discipline/bound
TESTS += tests/discipline/sim.sh tests/discipline/bad.sh tests/discipline/outliers.sh \
	tests/discipline/wallstep.sh \
	tests/discipline/bound.sh tests/discipline/holdover.sh tests/discipline/kpps.sh
EXTRA_DIST += tests/discipline/sim.sh tests/discipline/bad.sh tests/discipline/outliers.sh \
	tests/discipline/wallstep.sh \
	tests/discipline/bound.sh tests/discipline/holdover.sh tests/discipline/kpps.sh \
	tests/discipline/common.sh

tests_discipline_truth_SOURCES = tests/discipline/truth.c
tests_discipline_truth_LDADD = src/libclockd/libclockd.la -lm

tests_discipline_bound_SOURCES = tests/discipline/bound.c
tests_discipline_bound_LDADD = src/libclockd/libclockd.la -lm

# reference = pps against a fake kernel PPS device (kpps.sh): the RFC 2783
# ioctls answered by an LD_PRELOAD shared object, built for the tests only.
check_LTLIBRARIES += tests/discipline/fakepps-preload.la
tests_discipline_fakepps_preload_la_SOURCES = tests/discipline/fakepps-preload.c
tests_discipline_fakepps_preload_la_LDFLAGS = -module -avoid-version -shared -rpath /nowhere
tests_discipline_fakepps_preload_la_LIBADD = -ldl
