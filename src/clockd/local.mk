# clockd: the daemon.
sbin_PROGRAMS += src/clockd/clockd
CLOCKD_CORE_SOURCES = \
	src/clockd/clocksource.c src/clockd/clocksource.h \
	src/clockd/cs_tsc.c src/clockd/cs_posix.c \
	src/clockd/tick.c src/clockd/tick.h src/clockd/tick_timerfd.c \
	src/clockd/ticker.c src/clockd/ticker.h \
	src/clockd/pagefile.c src/clockd/pagefile.h \
	src/clockd/timekeeper.c src/clockd/timekeeper.h \
	src/clockd/devices.c src/clockd/devices.h \
	src/clockd/sim.c
src_clockd_clockd_SOURCES = src/clockd/main.c $(CLOCKD_CORE_SOURCES)
src_clockd_clockd_CFLAGS = $(AM_CFLAGS) $(LIBEVENT_CFLAGS) $(LIBSYSTEMD_CFLAGS)
src_clockd_clockd_LDADD = src/shared/libshared.la $(LIBEVENT_LIBS) $(LIBSYSTEMD_LIBS) -lpthread
