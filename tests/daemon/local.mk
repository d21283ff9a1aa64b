# Daemon and library behaviour: exact tick arithmetic, the live daemon's
# jiffies, the 32-bit wrap, restart continuity, and libclockd's errno.
check_PROGRAMS += tests/daemon/tickmath tests/daemon/errno tests/daemon/probe tests/daemon/ordering
TESTS += tests/daemon/tickmath tests/daemon/errno \
	tests/daemon/hz.sh tests/daemon/wrap.sh tests/daemon/restart.sh \
	tests/daemon/alarm.sh tests/daemon/wallstep.sh tests/daemon/ordering.sh
EXTRA_DIST += tests/daemon/common.sh \
	tests/daemon/hz.sh tests/daemon/wrap.sh tests/daemon/restart.sh \
	tests/daemon/alarm.sh tests/daemon/wallstep.sh tests/daemon/ordering.sh

tests_daemon_ordering_SOURCES = tests/daemon/ordering.c
tests_daemon_ordering_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests
tests_daemon_ordering_LDADD = src/libclockd/libclockd.la tests/libtap.la -lpthread

# The LD_PRELOAD traps of alarm.sh and wallstep.sh (a shared object, built
# for the tests only).
check_LTLIBRARIES += tests/daemon/trap-preload.la
tests_daemon_trap_preload_la_SOURCES = tests/daemon/trap-preload.c
tests_daemon_trap_preload_la_LDFLAGS = -module -avoid-version -shared -rpath /nowhere
tests_daemon_trap_preload_la_LIBADD = -ldl

tests_daemon_tickmath_SOURCES = tests/daemon/tickmath.c
tests_daemon_tickmath_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests
tests_daemon_tickmath_LDADD = src/shared/libshared.la tests/libtap.la

tests_daemon_errno_SOURCES = tests/daemon/errno.c
tests_daemon_errno_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests \
	-DCLOCKD_PATH='"$(abs_top_builddir)/src/clockd/clockd"'
tests_daemon_errno_LDADD = src/libclockd/libclockd.la src/shared/libshared.la tests/libtap.la

tests_daemon_probe_SOURCES = tests/daemon/probe.c
tests_daemon_probe_LDADD = src/libclockd/libclockd.la src/shared/libshared.la

# clockd-tsan: the daemon itself under ThreadSanitizer, for tsan.sh (its
# tick, reference and main threads, through faults and fallbacks). Built as
# torture-tsan is (tests/page/local.mk): a .skip file says why when $(CC)
# cannot link TSan programs. The source list is the daemon's and libshared's
# .c files; a file missing here fails the link, loudly.
CLOCKD_TSAN_C = \
	$(top_srcdir)/src/clockd/main.c $(top_srcdir)/src/clockd/clocksource.c \
	$(top_srcdir)/src/clockd/cs_tsc.c $(top_srcdir)/src/clockd/cs_posix.c \
	$(top_srcdir)/src/clockd/cs_hpet.c $(top_srcdir)/src/clockd/cs_phc.c \
	$(top_srcdir)/src/clockd/tick.c $(top_srcdir)/src/clockd/tick_timerfd.c \
	$(top_srcdir)/src/clockd/tick_hpet.c $(top_srcdir)/src/clockd/tick_rtc.c \
	$(top_srcdir)/src/clockd/ticker.c $(top_srcdir)/src/clockd/pagefile.c \
	$(top_srcdir)/src/clockd/timekeeper.c $(top_srcdir)/src/clockd/devices.c \
	$(top_srcdir)/src/clockd/reference.c $(top_srcdir)/src/clockd/discipline.c \
	$(top_srcdir)/src/clockd/export.c $(top_srcdir)/src/clockd/wheel.c \
	$(top_srcdir)/src/clockd/hrheap.c $(top_srcdir)/src/clockd/sim.c \
	$(top_srcdir)/src/shared/latch.c $(top_srcdir)/src/shared/tickmath.c \
	$(top_srcdir)/src/shared/log.c $(top_srcdir)/src/shared/config.c \
	$(top_srcdir)/src/shared/simscript.c $(top_srcdir)/src/shared/ring.c \
	$(top_srcdir)/src/shared/ctlproto.c \
	$(top_srcdir)/src/shared/timerrec.c $(top_srcdir)/src/clockd/ctlserver.c \
	$(top_srcdir)/src/clockd/timerbase.c $(top_srcdir)/src/clockd/tb_timer.c \
	$(top_srcdir)/src/clockd/tb_client.c $(top_srcdir)/src/clockd/safepath.c \
	$(top_srcdir)/src/libclockd/page.c $(top_srcdir)/src/libclockd/clock.c \
	$(top_srcdir)/src/libclockd/jiffies.c $(top_srcdir)/src/libclockd/status.c \
	$(top_srcdir)/src/libclockd/vclock.c
CLOCKD_TSAN_PROBE = echo 'int main(void) { return 0; }' | $(CC) -x c -o tests/daemon/tsan-probe -
CLOCKD_TSAN_GPIO =
if HAVE_LIBGPIOD
CLOCKD_TSAN_GPIO += -DHAVE_LIBGPIOD $(LIBGPIOD_CFLAGS) $(top_srcdir)/src/clockd/tick_gpio.c $(LIBGPIOD_LIBS)
endif
tests/daemon/clockd-tsan.stamp: $(CLOCKD_TSAN_C)
	@$(MKDIR_P) tests/daemon
	$(AM_V_CC)rm -f tests/daemon/clockd-tsan tests/daemon/clockd-tsan.skip; \
	if $(CLOCKD_TSAN_PROBE) -fsanitize=thread >/dev/null 2>&1; then \
		nofence=; $(CLOCKD_TSAN_PROBE) -Werror -Wno-tsan >/dev/null 2>&1 && nofence=-Wno-tsan; \
		$(CC) $(DEFS) $(DEFAULT_INCLUDES) $(AM_CPPFLAGS) $(CPPFLAGS) $(AM_CFLAGS) -O1 -g \
			-fsanitize=thread $$nofence $(LIBEVENT_CFLAGS) $(LIBSYSTEMD_CFLAGS) \
			-o tests/daemon/clockd-tsan $(CLOCKD_TSAN_C) $(CLOCKD_TSAN_GPIO) \
			$(LIBEVENT_LIBS) $(LIBSYSTEMD_LIBS) -lpthread -lm || exit 1; \
	else \
		echo "$(CC) cannot link -fsanitize=thread programs (no TSan runtime; Debian: libtsan2)" \
			> tests/daemon/clockd-tsan.skip; \
	fi; \
	rm -f tests/daemon/tsan-probe; touch $@
EXTRA_tests_daemon_probe_DEPENDENCIES = tests/daemon/clockd-tsan.stamp
TESTS += tests/daemon/tsan.sh
EXTRA_DIST += tests/daemon/tsan.sh
CLEANFILES += tests/daemon/clockd-tsan tests/daemon/clockd-tsan.skip tests/daemon/clockd-tsan.stamp
