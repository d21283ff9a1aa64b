# The discipline against the simulated 1 PPS (sim.sh; outliers.sh with late
# pulses; bad.sh a bad reference; holdover.sh a late pulse before a stall),
# with the simulation's truth (truth.c) to measure the clock's real error;
# bound.sh the error bound against that truth (bound.c).
check_PROGRAMS += tests/discipline/truth tests/discipline/bound
TESTS += tests/discipline/sim.sh tests/discipline/bad.sh tests/discipline/outliers.sh \
	tests/discipline/wallstep.sh \
	tests/discipline/bound.sh tests/discipline/holdover.sh
EXTRA_DIST += tests/discipline/sim.sh tests/discipline/bad.sh tests/discipline/outliers.sh \
	tests/discipline/wallstep.sh \
	tests/discipline/bound.sh tests/discipline/holdover.sh \
	tests/discipline/common.sh

tests_discipline_truth_SOURCES = tests/discipline/truth.c
tests_discipline_truth_LDADD = src/libclockd/libclockd.la -lm

tests_discipline_bound_SOURCES = tests/discipline/bound.c
tests_discipline_bound_LDADD = src/libclockd/libclockd.la -lm
