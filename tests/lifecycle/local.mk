# Issue #26 items 6-11: the daemon's and the library's life cycle (quotas,
# fork, a full page directory, CPU hotplug, restarts with another
# configuration, and the small ones).
TESTS += tests/lifecycle/fullpage.sh
EXTRA_DIST += tests/lifecycle/fullpage.sh

# Programs against a private daemon (tests/libtimers/daemon.c).
LIFECYCLE_TESTS = tests/lifecycle/latemax tests/lifecycle/quota tests/lifecycle/hotplug \
	tests/lifecycle/rateback tests/lifecycle/emfile tests/lifecycle/fork \
	tests/lifecycle/rehz tests/lifecycle/starting
check_PROGRAMS += $(LIFECYCLE_TESTS)
TESTS += $(LIFECYCLE_TESTS)
LIFECYCLE_COMMON = tests/libtimers/daemon.c tests/libtimers/daemon.h
LIFECYCLE_LDADD = tests/libtap.la src/libclockd/libclockd.la -lpthread
tests_lifecycle_latemax_SOURCES = tests/lifecycle/latemax.c $(LIFECYCLE_COMMON)
tests_lifecycle_latemax_LDADD = $(LIFECYCLE_LDADD)
tests_lifecycle_quota_SOURCES = tests/lifecycle/quota.c $(LIFECYCLE_COMMON)
tests_lifecycle_quota_LDADD = $(LIFECYCLE_LDADD)
tests_lifecycle_hotplug_SOURCES = tests/lifecycle/hotplug.c $(LIFECYCLE_COMMON)
tests_lifecycle_hotplug_LDADD = $(LIFECYCLE_LDADD)
tests_lifecycle_rateback_SOURCES = tests/lifecycle/rateback.c $(LIFECYCLE_COMMON)
tests_lifecycle_rateback_LDADD = $(LIFECYCLE_LDADD)
tests_lifecycle_emfile_SOURCES = tests/lifecycle/emfile.c $(LIFECYCLE_COMMON)
tests_lifecycle_emfile_LDADD = $(LIFECYCLE_LDADD)
tests_lifecycle_fork_SOURCES = tests/lifecycle/fork.c $(LIFECYCLE_COMMON)
tests_lifecycle_fork_LDADD = $(LIFECYCLE_LDADD)
tests_lifecycle_rehz_SOURCES = tests/lifecycle/rehz.c $(LIFECYCLE_COMMON)
tests_lifecycle_rehz_LDADD = $(LIFECYCLE_LDADD)
tests_lifecycle_starting_SOURCES = tests/lifecycle/starting.c $(LIFECYCLE_COMMON)
tests_lifecycle_starting_LDADD = $(LIFECYCLE_LDADD)
