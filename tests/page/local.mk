# Time page tests: the latch under torture, a writer killed mid-update, the
# ABI layout native and -m32, a 32-bit reader of the 64-bit daemon, TSan.

# The library's read path and the daemon's page writer, compiled from source
# for the tests (they need the internals, and -m32 and TSan builds of them).
PAGE_LIB_SOURCES = \
	src/libclockd/internal.h src/libclockd/page.c src/libclockd/clock.c \
	src/libclockd/jiffies.c src/libclockd/status.c src/libclockd/vclock.c \
	src/shared/latch.c src/shared/latch.h \
	src/shared/tickmath.c src/shared/tickmath.h src/shared/tsc.h
PAGE_WRITER_SOURCES = \
	tests/page/testpage.c tests/page/testpage.h \
	src/clockd/pagefile.c src/clockd/pagefile.h \
	src/clockd/safepath.c src/clockd/safepath.h \
	src/shared/log.c src/shared/log.h

# One convenience library of them (libtool objects, shared with libclockd.la).
check_LTLIBRARIES += tests/page/libpagetest.la
tests_page_libpagetest_la_SOURCES = $(PAGE_WRITER_SOURCES) $(PAGE_LIB_SOURCES)

check_PROGRAMS += tests/page/torture tests/page/deadwriter tests/page/abi tests/page/page-reader \
	tests/page/forged
TESTS += tests/page/torture tests/page/deadwriter tests/page/abi tests/page/forged \
	tests/page/m32-reader.sh tests/page/torture-tsan.sh
EXTRA_DIST += tests/page/m32-reader.sh tests/page/torture-tsan.sh

tests_page_torture_SOURCES = tests/page/torture.c
tests_page_torture_LDADD = tests/page/libpagetest.la tests/libtap.la -lpthread
tests_page_deadwriter_SOURCES = tests/page/deadwriter.c
tests_page_deadwriter_LDADD = tests/page/libpagetest.la tests/libtap.la -lpthread
tests_page_forged_SOURCES = tests/page/forged.c
tests_page_forged_LDADD = src/libclockd/libclockd.la tests/libtap.la
tests_page_abi_SOURCES = tests/page/abi.c
tests_page_abi_LDADD = tests/libtap.la
tests_page_page_reader_SOURCES = tests/page/page-reader.c
tests_page_page_reader_LDADD = tests/page/libpagetest.la -lpthread

# Programs built outside libtool: the project's warnings, but not the
# user's CFLAGS, which in CI carry -fsanitize=address (incompatible with
# TSan, and with no 32-bit runtime installed).
PAGE_CC = $(CC) $(DEFS) $(DEFAULT_INCLUDES) $(AM_CPPFLAGS) $(CPPFLAGS) $(AM_CFLAGS) -O2 -g
PAGE_LIB_C = \
	$(top_srcdir)/src/libclockd/page.c $(top_srcdir)/src/libclockd/clock.c \
	$(top_srcdir)/src/libclockd/jiffies.c $(top_srcdir)/src/libclockd/status.c \
	$(top_srcdir)/src/libclockd/vclock.c \
	$(top_srcdir)/src/shared/latch.c
PAGE_TORTURE_C = \
	$(top_srcdir)/tests/page/torture.c $(top_srcdir)/tests/page/testpage.c \
	$(top_srcdir)/src/clockd/pagefile.c $(top_srcdir)/src/clockd/safepath.c \
	$(top_srcdir)/src/shared/log.c \
	$(top_srcdir)/src/shared/tickmath.c \
	$(top_srcdir)/tests/tap.c $(PAGE_LIB_C)
PAGE_READER_C = $(top_srcdir)/tests/page/page-reader.c $(PAGE_LIB_C)
PAGE_H = \
	$(top_srcdir)/include/clockd/page.h $(top_srcdir)/include/clockd/clockd.h \
	$(top_srcdir)/src/libclockd/internal.h $(top_srcdir)/src/shared/latch.h \
	$(top_srcdir)/src/shared/tickmath.h $(top_srcdir)/src/shared/tsc.h \
	$(top_srcdir)/src/clockd/pagefile.h $(top_srcdir)/src/clockd/safepath.h \
	$(top_srcdir)/tests/page/testpage.h
PAGE_ABI_C = $(top_srcdir)/tests/page/abi.c $(top_srcdir)/tests/tap.c

# torture-tsan: the torture program under ThreadSanitizer when $(CC) can
# link it; otherwise torture-tsan.skip says why and the test skips. GCC
# warns (-Wtsan) that TSan does not model atomic_thread_fence: the latch's
# fences are invisible to it, its plain accesses are not; keep that warning
# from failing a -Werror build.
PAGE_TSAN_PROBE = echo 'int main(void) { return 0; }' | $(CC) -x c -o tests/page/tsan-probe -
tests/page/torture-tsan.stamp: $(PAGE_TORTURE_C) $(PAGE_H)
	@$(MKDIR_P) tests/page
	$(AM_V_CC)rm -f tests/page/torture-tsan tests/page/torture-tsan.skip; \
	if $(PAGE_TSAN_PROBE) -fsanitize=thread >/dev/null 2>&1; then \
		nofence=; $(PAGE_TSAN_PROBE) -Werror -Wno-tsan >/dev/null 2>&1 && nofence=-Wno-tsan; \
		$(PAGE_CC) -fsanitize=thread $$nofence -o tests/page/torture-tsan $(PAGE_TORTURE_C) $(LIBS) || exit 1; \
	else \
		echo "$(CC) cannot link -fsanitize=thread programs (no TSan runtime; Debian: libtsan2)" \
			> tests/page/torture-tsan.skip; \
	fi; \
	rm -f tests/page/tsan-probe; touch $@
EXTRA_tests_page_torture_DEPENDENCIES = tests/page/torture-tsan.stamp

# -m32 builds: the ABI dump (it must build), and the 32-bit page reader,
# whose build failure is recorded in page-reader-m32.err for the test to
# report (it is the library's code that fails, not this machine).
if HAVE_M32
tests/page/abi-m32: $(PAGE_ABI_C) $(top_srcdir)/include/clockd/page.h
	@$(MKDIR_P) tests/page
	$(AM_V_CC)$(PAGE_CC) -m32 -static -o $@ $(PAGE_ABI_C)
# The -m32 layout without running 32-bit code (see abi.c).
tests/page/abi-m32.layout: $(top_srcdir)/tests/page/abi.c $(top_srcdir)/include/clockd/page.h
	@$(MKDIR_P) tests/page
	$(AM_V_GEN)$(PAGE_CC) -m32 -DPAGE_ABI_LISTING -S -o $@.s $(top_srcdir)/tests/page/abi.c && \
	sed -n 's/.*"@layout \(.*\)".*/\1/p' $@.s > $@.tmp && rm -f $@.s && mv $@.tmp $@
EXTRA_tests_page_abi_DEPENDENCIES = tests/page/abi-m32 tests/page/abi-m32.layout
tests_page_abi_CPPFLAGS = $(AM_CPPFLAGS) -DPAGE_ABI_M32=1

tests/page/page-reader-m32.stamp: $(PAGE_READER_C) $(PAGE_H)
	@$(MKDIR_P) tests/page
	$(AM_V_CC)rm -f tests/page/page-reader-m32 tests/page/page-reader-m32.err; \
	if $(PAGE_CC) -m32 -static -o tests/page/page-reader-m32 $(PAGE_READER_C) $(LIBS) \
		2> tests/page/page-reader-m32.log-cc; then \
		cat tests/page/page-reader-m32.log-cc >&2; \
	else \
		mv tests/page/page-reader-m32.log-cc tests/page/page-reader-m32.err; \
	fi; \
	rm -f tests/page/page-reader-m32.log-cc; touch $@
else
tests_page_abi_CPPFLAGS = $(AM_CPPFLAGS)
tests/page/page-reader-m32.stamp:
	@$(MKDIR_P) tests/page
	$(AM_V_at)echo "configure found no working -m32 toolchain (Debian: gcc-multilib)" \
		> tests/page/page-reader-m32.skip; touch $@
endif
EXTRA_tests_page_page_reader_DEPENDENCIES = tests/page/page-reader-m32.stamp

CLEANFILES += tests/page/torture-tsan tests/page/torture-tsan.skip tests/page/torture-tsan.stamp \
	tests/page/abi-m32 tests/page/abi-m32.layout tests/page/page-reader-m32 tests/page/page-reader-m32.err \
	tests/page/page-reader-m32.skip tests/page/page-reader-m32.stamp
