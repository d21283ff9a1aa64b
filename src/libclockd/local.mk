# libclockd: the client library. Only symbols tagged CLOCKD_EXPORT and
# listed in libclockd.sym are exported.
lib_LTLIBRARIES += src/libclockd/libclockd.la
clockdinclude_HEADERS += include/clockd/clockd.h include/clockd/page.h
# The library's code, built once for libclockd.so and the preload module.
noinst_LTLIBRARIES += src/libclockd/libclockd-core.la
src_libclockd_libclockd_core_la_SOURCES = \
	src/libclockd/internal.h \
	src/libclockd/page.c \
	src/libclockd/clock.c \
	src/libclockd/jiffies.c \
	src/libclockd/status.c \
	src/libclockd/vclock.c \
	src/libclockd/tlock.c \
	src/libclockd/conn.c \
	src/libclockd/timer.c \
	src/libclockd/ptimer.c \
	src/libclockd/names.c \
	src/libclockd/timerstats.c \
	src/libclockd/sleep.c
src_libclockd_libclockd_core_la_LIBADD = src/shared/libshared-client.la -lpthread
# The library defines what <clockd/clockd.h> would inline.
src_libclockd_libclockd_core_la_CPPFLAGS = $(AM_CPPFLAGS) -DCLOCKD_NO_INLINE
src_libclockd_libclockd_la_SOURCES =
src_libclockd_libclockd_la_LIBADD = src/libclockd/libclockd-core.la
src_libclockd_libclockd_la_LDFLAGS = \
	-version-info $(LIBCLOCKD_VERSION_INFO) \
	-Wl,--version-script=$(top_srcdir)/src/libclockd/libclockd.sym \
	-Wl,--no-undefined
EXTRA_src_libclockd_libclockd_la_DEPENDENCIES = src/libclockd/libclockd.sym
pkgconfig_DATA += src/libclockd/libclockd.pc
EXTRA_DIST += src/libclockd/libclockd.sym src/libclockd/libclockd.pc.in

# libclockd-preload.so: an LD_PRELOAD module (libclockd-preload(8)). It
# links the library's code (libclockd-core.la) rather than libclockd.so:
# with --wrap, the copy's own calls to the kernel's clocks reach libc, not
# the interposers (linked to libclockd.so they would come back to us).
# It is no library to link with: it goes in $(pkglibdir), $(libdir)/clockd.
pkglib_LTLIBRARIES += src/libclockd/libclockd-preload.la
src_libclockd_libclockd_preload_la_SOURCES = \
	src/libclockd/preload.h \
	src/libclockd/preload.c \
	src/libclockd/preload-mode.c \
	src/libclockd/preload-clock.c \
	src/libclockd/preload-sleep.c \
	src/libclockd/preload-timer.c
src_libclockd_libclockd_preload_la_CPPFLAGS = $(AM_CPPFLAGS) -DCLOCKD_NO_INLINE
src_libclockd_libclockd_preload_la_LDFLAGS = -module -avoid-version -shared \
	-Wl,--version-script=$(top_srcdir)/src/libclockd/preload.sym \
	-Wl,--wrap=clock_gettime -Wl,--wrap=clock_getres -Wl,--wrap=clock_nanosleep \
	-Wl,--no-undefined
src_libclockd_libclockd_preload_la_LIBADD = src/libclockd/libclockd-core.la -ldl -lpthread
EXTRA_src_libclockd_libclockd_preload_la_DEPENDENCIES = src/libclockd/preload.sym
EXTRA_DIST += src/libclockd/preload.sym
