# Timer data structures of the daemon: the jiffies wheel and the ns heap,
# each against its contract (unit tests, built from the daemon's sources).
check_PROGRAMS += tests/timers/wheel tests/timers/hrheap
TESTS += tests/timers/wheel tests/timers/hrheap

tests_timers_wheel_SOURCES = tests/timers/wheel.c src/clockd/wheel.c src/clockd/wheel.h
tests_timers_wheel_LDADD = tests/libtap.la
tests_timers_hrheap_SOURCES = tests/timers/hrheap.c src/clockd/hrheap.c src/clockd/hrheap.h
tests_timers_hrheap_LDADD = tests/libtap.la

# The per-CPU timer bases (src/clockd/timerbase.h) on a fake clock (no
# daemon): the bases run in the test program, which plays the client's
# side on the shared memory (tbclient.[ch]).
TIMERBASE_SOURCES = \
	src/clockd/timerbase.c src/clockd/timerbase.h src/clockd/tb_internal.h \
	src/clockd/tb_timer.c src/clockd/tb_client.c \
	src/clockd/wheel.c src/clockd/wheel.h src/clockd/hrheap.c src/clockd/hrheap.h
check_PROGRAMS += tests/timers/base
TESTS += tests/timers/base
tests_timers_base_SOURCES = tests/timers/base.c tests/timers/tbclient.c tests/timers/tbclient.h \
	$(TIMERBASE_SOURCES)
tests_timers_base_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests
tests_timers_base_LDADD = src/shared/libshared.la tests/libtap.la -lpthread

# base-tsan: the same test under ThreadSanitizer (smaller runs: TSan is
# slow), built as tests/page/local.mk builds torture-tsan: when $(CC)
# cannot link TSan programs, base-tsan.skip says why and the test skips.
TB_TSAN_C = \
	$(top_srcdir)/tests/timers/base.c $(top_srcdir)/tests/timers/tbclient.c \
	$(top_srcdir)/src/clockd/timerbase.c $(top_srcdir)/src/clockd/tb_timer.c \
	$(top_srcdir)/src/clockd/tb_client.c $(top_srcdir)/src/clockd/wheel.c \
	$(top_srcdir)/src/clockd/hrheap.c \
	$(top_srcdir)/src/shared/ring.c $(top_srcdir)/src/shared/timerrec.c \
	$(top_srcdir)/src/shared/ctlproto.c $(top_srcdir)/src/shared/log.c \
	$(top_srcdir)/src/shared/tickmath.c $(top_srcdir)/tests/tap.c
TB_TSAN_H = \
	$(top_srcdir)/src/clockd/timerbase.h $(top_srcdir)/src/clockd/tb_internal.h \
	$(top_srcdir)/src/clockd/wheel.h $(top_srcdir)/src/clockd/hrheap.h \
	$(top_srcdir)/src/shared/ring.h $(top_srcdir)/src/shared/timerrec.h \
	$(top_srcdir)/tests/timers/tbclient.h
TB_TSAN_PROBE = echo 'int main(void) { return 0; }' | $(CC) -x c -o tests/timers/tsan-probe -
tests/timers/base-tsan.stamp: $(TB_TSAN_C) $(TB_TSAN_H)
	@$(MKDIR_P) tests/timers
	$(AM_V_CC)rm -f tests/timers/base-tsan tests/timers/base-tsan.skip; \
	if $(TB_TSAN_PROBE) -fsanitize=thread >/dev/null 2>&1; then \
		nofence=; $(TB_TSAN_PROBE) -Werror -Wno-tsan >/dev/null 2>&1 && nofence=-Wno-tsan; \
		$(CC) $(DEFS) $(DEFAULT_INCLUDES) $(AM_CPPFLAGS) -I$(top_srcdir)/tests $(CPPFLAGS) $(AM_CFLAGS) \
			-O1 -g -fsanitize=thread $$nofence -o tests/timers/base-tsan $(TB_TSAN_C) -lpthread || exit 1; \
	else \
		echo "$(CC) cannot link -fsanitize=thread programs (no TSan runtime; Debian: libtsan2)" \
			> tests/timers/base-tsan.skip; \
	fi; \
	rm -f tests/timers/tsan-probe; touch $@
EXTRA_tests_timers_base_DEPENDENCIES = tests/timers/base-tsan.stamp
TESTS += tests/timers/base-tsan.sh
EXTRA_DIST += tests/timers/base-tsan.sh
CLEANFILES += tests/timers/base-tsan tests/timers/base-tsan.skip tests/timers/base-tsan.stamp
