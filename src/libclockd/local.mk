# libclockd: the client library. Only symbols tagged CLOCKD_EXPORT and
# listed in libclockd.sym are exported.
lib_LTLIBRARIES += src/libclockd/libclockd.la
clockdinclude_HEADERS += include/clockd/clockd.h include/clockd/page.h
LIBCLOCKD_SOURCES = \
	src/libclockd/internal.h \
	src/libclockd/page.c \
	src/libclockd/clock.c \
	src/libclockd/jiffies.c \
	src/libclockd/status.c \
	src/libclockd/vclock.c \
	src/libclockd/conn.c \
	src/libclockd/timer.c \
	src/libclockd/ptimer.c \
	src/shared/ring.c src/shared/ring.h \
	src/shared/timerrec.c src/shared/timerrec.h \
	src/shared/ctlproto.c src/shared/ctlproto.h \
	src/libclockd/sleep.c \
	src/shared/latch.c src/shared/latch.h \
	src/shared/tickmath.h \
	src/shared/tsc.h
src_libclockd_libclockd_la_SOURCES = $(LIBCLOCKD_SOURCES)
src_libclockd_libclockd_la_LDFLAGS = \
	-version-info $(LIBCLOCKD_VERSION_INFO) \
	-Wl,--version-script=$(top_srcdir)/src/libclockd/libclockd.sym \
	-Wl,--no-undefined
src_libclockd_libclockd_la_LIBADD = -lpthread
EXTRA_src_libclockd_libclockd_la_DEPENDENCIES = src/libclockd/libclockd.sym
pkgconfig_DATA += src/libclockd/libclockd.pc
EXTRA_DIST += src/libclockd/libclockd.sym src/libclockd/libclockd.pc.in

# libclockd-preload.so: an LD_PRELOAD module (libclockd-preload(8)). It is
# built from libclockd's sources rather than linked to libclockd.so: with
# --wrap, the copy's own calls to the kernel's clocks reach libc, not the
# interposers (linked to libclockd.so they would come back to us).
# It is no library to link with: it goes in $(pkglibdir), $(libdir)/clockd.
pkglib_LTLIBRARIES += src/libclockd/libclockd-preload.la
# src/shared/paths.h (conn.c's) is listed nowhere else: here it also makes the
# tarball complete.
src_libclockd_libclockd_preload_la_SOURCES = src/libclockd/preload.c $(LIBCLOCKD_SOURCES) src/shared/paths.h
# Per-target flags: objects of their own, apart from libclockd.la's.
src_libclockd_libclockd_preload_la_CPPFLAGS = $(AM_CPPFLAGS)
src_libclockd_libclockd_preload_la_LDFLAGS = -module -avoid-version -shared \
	-Wl,--version-script=$(top_srcdir)/src/libclockd/preload.sym \
	-Wl,--wrap=clock_gettime -Wl,--wrap=clock_getres -Wl,--wrap=clock_nanosleep \
	-Wl,--no-undefined
src_libclockd_libclockd_preload_la_LIBADD = -ldl -lpthread
EXTRA_src_libclockd_libclockd_preload_la_DEPENDENCIES = src/libclockd/preload.sym
EXTRA_DIST += src/libclockd/preload.sym
