# Time page tests: the latch under torture, a writer killed mid-update, the
# ABI layout native and -m32, a 32-bit reader of the 64-bit daemon, TSan,
# the device table through clockd_devices2() and clockd_devices().

# The library's read path and the daemon's page writer, with the tests'
# page helpers (the -m32 reader below is compiled from source: a 32-bit
# build of the library's code).
check_LTLIBRARIES += tests/page/libpagetest.la
tests_page_libpagetest_la_SOURCES = tests/page/testpage.c tests/page/testpage.h
tests_page_libpagetest_la_LIBADD = src/clockd/libclockd-daemon.la src/libclockd/libclockd-core.la

check_PROGRAMS += tests/page/torture tests/page/deadwriter tests/page/abi tests/page/page-reader \
	tests/page/devices tests/page/forged
TESTS += tests/page/torture tests/page/deadwriter tests/page/abi tests/page/devices \
	tests/page/forged tests/page/m32-reader.sh
EXTRA_DIST += tests/page/m32-reader.sh

tests_page_torture_SOURCES = tests/page/torture.c
tests_page_torture_LDADD = tests/page/libpagetest.la tests/libtap.la -lpthread
tests_page_deadwriter_SOURCES = tests/page/deadwriter.c
tests_page_deadwriter_LDADD = tests/page/libpagetest.la tests/libtap.la -lpthread
tests_page_forged_SOURCES = tests/page/forged.c
tests_page_forged_LDADD = src/libclockd/libclockd.la tests/libtap.la
tests_page_abi_SOURCES = tests/page/abi.c
# clockd_devices2() and clockd_devices() against a device table it writes.
tests_page_devices_SOURCES = tests/page/devices.c
tests_page_devices_LDADD = tests/page/libpagetest.la tests/libtap.la -lpthread
tests_page_abi_LDADD = tests/libtap.la
tests_page_page_reader_SOURCES = tests/page/page-reader.c
tests_page_page_reader_LDADD = tests/page/libpagetest.la -lpthread

# Programs built outside libtool (-m32): the project's warnings, but not the
# user's CFLAGS, which in CI carry -fsanitize=address (with no 32-bit
# runtime installed).
PAGE_CC = $(CC) $(DEFS) $(DEFAULT_INCLUDES) $(AM_CPPFLAGS) $(CPPFLAGS) $(AM_CFLAGS) -O2 -g
PAGE_LIB_C = \
	$(top_srcdir)/src/libclockd/page.c $(top_srcdir)/src/libclockd/clock.c \
	$(top_srcdir)/src/libclockd/jiffies.c $(top_srcdir)/src/libclockd/status.c \
	$(top_srcdir)/src/libclockd/vclock.c \
	$(top_srcdir)/src/shared/latch.c $(top_srcdir)/src/shared/timens.c
PAGE_READER_C = $(top_srcdir)/tests/page/page-reader.c $(PAGE_LIB_C)
PAGE_H = \
	$(top_srcdir)/include/clockd/page.h $(top_srcdir)/include/clockd/clockd.h \
	$(top_srcdir)/src/libclockd/internal.h $(top_srcdir)/src/shared/latch.h \
	$(top_srcdir)/src/shared/pagetime.h \
	$(top_srcdir)/src/shared/tickmath.h $(top_srcdir)/src/shared/tsc.h \
	$(top_srcdir)/src/shared/timens.h
PAGE_ABI_C = $(top_srcdir)/tests/page/abi.c $(top_srcdir)/tests/tap.c

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
tests/page/page-reader-m32.stamp:
	@$(MKDIR_P) tests/page
	$(AM_V_at)echo "configure found no working -m32 toolchain (Debian: gcc-multilib)" \
		> tests/page/page-reader-m32.skip; touch $@
# The same flags as with -m32 but the define: automake gives the program
# per-target objects either way, and they need AM_CPPFLAGS.
tests_page_abi_CPPFLAGS = $(AM_CPPFLAGS)
endif
EXTRA_tests_page_page_reader_DEPENDENCIES = tests/page/page-reader-m32.stamp

CLEANFILES += tests/page/abi-m32 tests/page/abi-m32.layout tests/page/page-reader-m32 tests/page/page-reader-m32.err \
	tests/page/page-reader-m32.skip tests/page/page-reader-m32.stamp
