# clockd: the daemon.
sbin_PROGRAMS += src/clockd/clockd
CLOCKD_CORE_SOURCES = \
	src/clockd/clocksource.c src/clockd/clocksource.h \
	src/clockd/cs_tsc.c src/clockd/cs_posix.c \
	src/clockd/cs_hpet.c src/clockd/cs_phc.c src/clockd/phc.h \
	src/clockd/tick.c src/clockd/tick.h src/clockd/tick_timerfd.c \
	src/clockd/tick_hpet.c src/clockd/tick_rtc.c \
	src/clockd/ticker.c src/clockd/ticker.h \
	src/clockd/pagefile.c src/clockd/pagefile.h \
	src/clockd/safepath.c src/clockd/safepath.h \
	src/clockd/timekeeper.c src/clockd/timekeeper.h \
	src/clockd/devices.c src/clockd/devices.h \
	src/clockd/reference.c src/clockd/reference.h \
	src/clockd/discipline.c src/clockd/discipline.h \
	src/clockd/export.c src/clockd/export.h \
	src/clockd/wheel.c src/clockd/wheel.h \
	src/clockd/hrheap.c src/clockd/hrheap.h \
	src/clockd/timerbase.c src/clockd/timerbase.h src/clockd/tb_internal.h \
	src/clockd/tb_timer.c src/clockd/tb_client.c \
	src/clockd/ctlserver.c src/clockd/ctlserver.h \
	src/clockd/sim.c
src_clockd_clockd_SOURCES = src/clockd/main.c $(CLOCKD_CORE_SOURCES)
src_clockd_clockd_CFLAGS = $(AM_CFLAGS) $(LIBEVENT_CFLAGS) $(LIBSYSTEMD_CFLAGS)
# The daemon reads its own clocks through libclockd, as its clients do
# (the timer bases' ns timers).
src_clockd_clockd_LDADD = src/shared/libshared.la src/libclockd/libclockd.la $(LIBEVENT_LIBS) $(LIBSYSTEMD_LIBS) -lpthread -lm
# tick gpio needs libgpiod (1.6, the v1 API); without it the driver is
# left out of the tick table.
if HAVE_LIBGPIOD
CLOCKD_CORE_SOURCES += src/clockd/tick_gpio.c
src_clockd_clockd_CFLAGS += -DHAVE_LIBGPIOD $(LIBGPIOD_CFLAGS)
src_clockd_clockd_LDADD += $(LIBGPIOD_LIBS)
endif
