# Adversarial reliability (issue #8): crash and restart under load,
# forgery, resource exhaustion, valgrind. Each test starts its own clockd
# on a private page. STRESS_LONG=1 makes the long forms.
# oom.sh runs clockd with tests/stress/failalloc.so preloaded: malloc,
# calloc, realloc and the aligned allocators fail (ENOMEM) while its
# control file ($FAILALLOC_CTL, set with "oomclient ctl PATH MODE") says
# so, every call (mode 1) or every Nth (mode N), and count what they
# failed. It checks that clients get ENOMEM or a closed connection, timers
# already armed fire, the page stays live, the log is bounded, and nothing
# is left half applied (OOM_ROUNDS sets the rounds of its loop, 200). It
# skips in an ASan build, whose allocator the shim would bypass.
check_PROGRAMS += tests/stress/crashload
TESTS += tests/stress/crashload
tests_stress_crashload_SOURCES = tests/stress/crashload.c tests/libtimers/daemon.c tests/libtimers/daemon.h
tests_stress_crashload_LDADD = tests/libtap.la src/libclockd/libclockd.la -lpthread
check_PROGRAMS += tests/stress/holdconn
tests_stress_holdconn_SOURCES = tests/stress/holdconn.c
TESTS += tests/stress/forgery.sh tests/stress/exhaust.sh tests/stress/peruser.sh tests/stress/valgrind.sh
EXTRA_DIST += tests/stress/lib.sh tests/stress/forgery.sh tests/stress/exhaust.sh tests/stress/peruser.sh tests/stress/valgrind.sh
# Flood and quotas: four attackers against a well-behaved client
# (flood.sh; bench/run.sh runs the same program for the latency figures).
check_PROGRAMS += tests/stress/flood
tests_stress_flood_SOURCES = tests/stress/flood.c tests/ctlraw.c tests/ctlraw.h
tests_stress_flood_LDADD = src/libclockd/libclockd.la src/shared/libshared.la -lpthread
TESTS += tests/stress/flood.sh
EXTRA_DIST += tests/stress/flood.sh
# logflood.sh: a client that corrupts its submission ring and reconnects
# thousands of times (hostile corrupt) gives O(1) log lines.
check_PROGRAMS += tests/stress/hostile
tests_stress_hostile_SOURCES = tests/stress/hostile.c tests/ctlraw.c tests/ctlraw.h
tests_stress_hostile_LDADD = src/shared/libshared.la
TESTS += tests/stress/logflood.sh
EXTRA_DIST += tests/stress/logflood.sh
# clientstats.sh: CLIENT_STATS shows a client its own uid's clients only,
# unless it is root or in stats_group (as root, with nobody and other uids).
TESTS += tests/stress/clientstats.sh
EXTRA_DIST += tests/stress/clientstats.sh
# paths.sh: foreign and writable page and socket directories refused, and
# a symlink race loop as nobody against a root daemon.
TESTS += tests/stress/paths.sh tests/stress/busy.sh
EXTRA_DIST += tests/stress/busy.sh
EXTRA_DIST += tests/stress/paths.sh
# budget.sh: two clients with 1000 periodic timers of 1 us each against a
# well-behaved one (CPU and lateness), and one user's clients against
# max_timers_per_user (budget).
check_PROGRAMS += tests/stress/budget
tests_stress_budget_SOURCES = tests/stress/budget.c tests/ctlraw.c tests/ctlraw.h
tests_stress_budget_LDADD = src/libclockd/libclockd.la src/shared/libshared.la -lpthread
TESTS += tests/stress/budget.sh
EXTRA_DIST += tests/stress/budget.sh
# saturate.sh (root): 100 k expiries/s and the one-shot re-arm flood beside
# a SCHED_OTHER busy loop per CPU: the daemon <= 25% of a core, the loops
# keep their share, no RT throttling (issue #27; budget saturate).
TESTS += tests/stress/saturate.sh
EXTRA_DIST += tests/stress/saturate.sh
# Both measure a busy loop's share of a CPU beside a flood: one after the
# other, never side by side under make -j (one's flood is the other's
# noise: budget.sh's loop kept 2.2% of its CPU beside saturate.sh's).
tests/stress/saturate.log: tests/stress/budget.log
# oom.sh: allocation failures injected into clockd (failalloc.so, an
# LD_PRELOAD shim driven by a control file) and a client that arms into
# them (oomclient).
check_LTLIBRARIES += tests/stress/failalloc.la
tests_stress_failalloc_la_SOURCES = tests/stress/failalloc.c tests/stress/failalloc.h
tests_stress_failalloc_la_LDFLAGS = -module -avoid-version -shared -rpath /nowhere
check_PROGRAMS += tests/stress/oomclient
tests_stress_oomclient_SOURCES = tests/stress/oomclient.c tests/stress/failalloc.h tests/ctlraw.c tests/ctlraw.h
tests_stress_oomclient_LDADD = src/libclockd/libclockd.la src/shared/libshared.la
TESTS += tests/stress/oom.sh
EXTRA_DIST += tests/stress/oom.sh
