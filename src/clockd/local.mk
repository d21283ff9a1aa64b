# clockd: the daemon. Everything but main.c is one convenience library,
# built once, that the daemon and the tests link (tests/timers, ...).
noinst_LTLIBRARIES += src/clockd/libclockd-daemon.la
src_clockd_libclockd_daemon_la_SOURCES = \
	src/clockd/params.c src/clockd/params.h \
	src/clockd/pagefile.c src/clockd/pagefile.h \
	src/clockd/leap.c src/clockd/leap.h \
	src/clockd/events.c src/clockd/events.h \
	src/clockd/rtsched.c src/clockd/rtsched.h \
	src/clockd/safepath.c src/clockd/safepath.h \
	src/clockd/reloadstat.c src/clockd/reloadstat.h \
	src/clockd/statlog.c src/clockd/statlog.h \
	src/clockd/timekeeper.c src/clockd/timekeeper.h \
	src/clockd/tickthread.c src/clockd/tickthread.h \
	src/clockd/devices.c src/clockd/devices.h \
	src/clockd/discipline.c src/clockd/discipline.h \
	src/clockd/export.c src/clockd/export.h \
	src/clockd/ctlserver.c src/clockd/ctlserver.h \
	src/clockd/wakeup.c src/clockd/wakeup.h \
	src/clockd/sim.c src/clockd/sim.h \
	src/clockd/sources/clocksource.c src/clockd/sources/clocksource.h \
	src/clockd/sources/tsc.c src/clockd/sources/posix.c \
	src/clockd/sources/hpet.c src/clockd/sources/phc.c src/clockd/sources/phc.h \
	src/clockd/ticks/tick.c src/clockd/ticks/tick.h src/clockd/ticks/wait.c \
	src/clockd/ticks/timerfd.c src/clockd/ticks/hpet.c src/clockd/ticks/rtc.c \
	src/clockd/references/reference.c src/clockd/references/reference.h \
	src/clockd/references/queue.c src/clockd/references/pps.c src/clockd/references/phc.c \
	src/clockd/references/system.c src/clockd/references/kpps.c \
	src/clockd/timers/timerbase.c src/clockd/timers/timerbase.h src/clockd/timers/internal.h \
	src/clockd/timers/client.c src/clockd/timers/timer.c src/clockd/timers/deliver.c \
	src/clockd/timers/shm.c \
	src/clockd/timers/wheel.c src/clockd/timers/wheel.h \
	src/clockd/timers/hrheap.c src/clockd/timers/hrheap.h src/clockd/timers/wakelead.h
src_clockd_libclockd_daemon_la_CFLAGS = $(AM_CFLAGS) $(LIBEVENT_CFLAGS) $(LIBSYSTEMD_CFLAGS)
# The daemon never links the client library: its timer bases read the
# timekeeper's in-process clock (tests/layers/deps.sh checks it).
src_clockd_libclockd_daemon_la_LIBADD = src/shared/libshared.la $(LIBEVENT_LIBS) $(LIBSYSTEMD_LIBS) -lpthread -lm
# tick gpio (and reference gpio) needs libgpiod: 1.6 (the v1 API) or 2.x
# (the v2 API), one backend file each behind gpioline.h, as configure found
# (--with-libgpiod); without it the driver is left out of the tick table.
if HAVE_LIBGPIOD
if LIBGPIOD_V2
GPIOLINE_SOURCES = src/clockd/ticks/gpioline_v2.c
else
GPIOLINE_SOURCES = src/clockd/ticks/gpioline_v1.c
endif
src_clockd_libclockd_daemon_la_SOURCES += src/clockd/ticks/gpio.c src/clockd/ticks/gpioline.h $(GPIOLINE_SOURCES)
src_clockd_libclockd_daemon_la_CFLAGS += -DHAVE_LIBGPIOD $(LIBGPIOD_CFLAGS)
src_clockd_libclockd_daemon_la_LIBADD += $(LIBGPIOD_LIBS)
endif
EXTRA_DIST += src/clockd/ticks/gpioline_v1.c src/clockd/ticks/gpioline_v2.c

sbin_PROGRAMS += src/clockd/clockd
src_clockd_clockd_SOURCES = src/clockd/main.c
src_clockd_clockd_CFLAGS = $(AM_CFLAGS) $(LIBEVENT_CFLAGS) $(LIBSYSTEMD_CFLAGS)
src_clockd_clockd_LDADD = src/clockd/libclockd-daemon.la
if HAVE_LIBGPIOD
src_clockd_clockd_CFLAGS += -DHAVE_LIBGPIOD $(LIBGPIOD_CFLAGS)
endif
