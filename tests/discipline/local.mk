# The discipline against the simulated 1 PPS (sim.sh), with the simulation's
# truth (truth.c) to measure the clock's real error.
check_PROGRAMS += tests/discipline/truth
TESTS += tests/discipline/sim.sh tests/discipline/bad.sh
EXTRA_DIST += tests/discipline/sim.sh tests/discipline/bad.sh

tests_discipline_truth_SOURCES = tests/discipline/truth.c
tests_discipline_truth_LDADD = src/libclockd/libclockd.la -lm
