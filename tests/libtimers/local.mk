# The client timer API end to end: each test starts its own clockd on a
# private page and control socket (tests/libtimers/daemon.c).
LIBTIMERS_TESTS = tests/libtimers/pinned tests/libtimers/early tests/libtimers/races \
	tests/libtimers/scale tests/libtimers/reconnect tests/libtimers/sched \
	tests/libtimers/rearm tests/libtimers/restart tests/libtimers/selfwake
check_PROGRAMS += $(LIBTIMERS_TESTS)
TESTS += $(LIBTIMERS_TESTS) tests/libtimers/example.sh
EXTRA_DIST += tests/libtimers/example.sh
LIBTIMERS_COMMON = tests/libtimers/daemon.c tests/libtimers/daemon.h
LIBTIMERS_LDADD = tests/libtap.la src/libclockd/libclockd.la -lpthread
tests_libtimers_pinned_SOURCES = tests/libtimers/pinned.c $(LIBTIMERS_COMMON)
tests_libtimers_pinned_LDADD = $(LIBTIMERS_LDADD)
tests_libtimers_early_SOURCES = tests/libtimers/early.c $(LIBTIMERS_COMMON)
tests_libtimers_early_LDADD = $(LIBTIMERS_LDADD)
tests_libtimers_races_SOURCES = tests/libtimers/races.c $(LIBTIMERS_COMMON)
tests_libtimers_races_LDADD = $(LIBTIMERS_LDADD)
tests_libtimers_scale_SOURCES = tests/libtimers/scale.c $(LIBTIMERS_COMMON)
tests_libtimers_scale_LDADD = $(LIBTIMERS_LDADD)
tests_libtimers_reconnect_SOURCES = tests/libtimers/reconnect.c $(LIBTIMERS_COMMON)
tests_libtimers_reconnect_LDADD = $(LIBTIMERS_LDADD)
tests_libtimers_sched_SOURCES = tests/libtimers/sched.c $(LIBTIMERS_COMMON)
tests_libtimers_sched_LDADD = $(LIBTIMERS_LDADD)
tests_libtimers_rearm_SOURCES = tests/libtimers/rearm.c $(LIBTIMERS_COMMON)
tests_libtimers_rearm_LDADD = $(LIBTIMERS_LDADD)
tests_libtimers_restart_SOURCES = tests/libtimers/restart.c $(LIBTIMERS_COMMON)
tests_libtimers_restart_LDADD = $(LIBTIMERS_LDADD)
tests_libtimers_selfwake_SOURCES = tests/libtimers/selfwake.c $(LIBTIMERS_COMMON)
tests_libtimers_selfwake_LDADD = $(LIBTIMERS_LDADD)
