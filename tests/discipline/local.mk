# The discipline against the simulated 1 PPS (sim.sh; outliers.sh with late
# pulses; bad.sh a bad reference), with the simulation's
# truth (truth.c) to measure the clock's real error.
check_PROGRAMS += tests/discipline/truth
TESTS += tests/discipline/sim.sh tests/discipline/bad.sh tests/discipline/outliers.sh
EXTRA_DIST += tests/discipline/sim.sh tests/discipline/bad.sh tests/discipline/outliers.sh \
	tests/discipline/common.sh

tests_discipline_truth_SOURCES = tests/discipline/truth.c
tests_discipline_truth_LDADD = src/libclockd/libclockd.la -lm
