# The shared-memory ring (src/shared/ring.c): its contract on one thread,
# hostile headers and counters; two threads and two processes passing 1e7
# records with the eventfd wake-up; the two-thread run under TSan.
check_PROGRAMS += tests/ring/basic tests/ring/stress
TESTS += tests/ring/basic tests/ring/stress tests/ring/stress-tsan.sh
EXTRA_DIST += tests/ring/stress-tsan.sh

tests_ring_basic_SOURCES = tests/ring/basic.c
tests_ring_basic_LDADD = src/shared/libshared.la tests/libtap.la
tests_ring_stress_SOURCES = tests/ring/stress.c
tests_ring_stress_LDADD = src/shared/libshared.la tests/libtap.la -lpthread

# stress-tsan: the stress program under ThreadSanitizer, built as
# tests/page/local.mk builds torture-tsan (outside libtool, without the
# user's CFLAGS, which may carry -fsanitize=address); when $(CC) cannot link
# TSan programs, stress-tsan.skip says why and the test skips. -Wno-tsan:
# GCC warns that TSan does not model the wake-up protocol's fences (they
# order the flag against the counters, no record data depends on them).
RING_CC = $(CC) $(DEFS) $(DEFAULT_INCLUDES) $(AM_CPPFLAGS) $(CPPFLAGS) $(AM_CFLAGS) -O2 -g
RING_STRESS_C = $(top_srcdir)/tests/ring/stress.c $(top_srcdir)/src/shared/ring.c $(top_srcdir)/tests/tap.c
RING_STRESS_H = $(top_srcdir)/src/shared/ring.h $(top_srcdir)/tests/tap.h
RING_TSAN_PROBE = echo 'int main(void) { return 0; }' | $(CC) -x c -o tests/ring/tsan-probe -
tests/ring/stress-tsan.stamp: $(RING_STRESS_C) $(RING_STRESS_H)
	@$(MKDIR_P) tests/ring
	$(AM_V_CC)rm -f tests/ring/stress-tsan tests/ring/stress-tsan.skip; \
	if $(RING_TSAN_PROBE) -fsanitize=thread >/dev/null 2>&1; then \
		nofence=; $(RING_TSAN_PROBE) -Werror -Wno-tsan >/dev/null 2>&1 && nofence=-Wno-tsan; \
		$(RING_CC) -fsanitize=thread $$nofence -o tests/ring/stress-tsan $(RING_STRESS_C) $(LIBS) || exit 1; \
	else \
		echo "$(CC) cannot link -fsanitize=thread programs (no TSan runtime; Debian: libtsan2)" \
			> tests/ring/stress-tsan.skip; \
	fi; \
	rm -f tests/ring/tsan-probe; touch $@
EXTRA_tests_ring_stress_DEPENDENCIES = tests/ring/stress-tsan.stamp

CLEANFILES += tests/ring/stress-tsan tests/ring/stress-tsan.skip tests/ring/stress-tsan.stamp
