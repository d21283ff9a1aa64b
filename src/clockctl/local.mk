# clockctl: the command-line tool. It reads the daemon only through
# libclockd's public API (dogfooding): it includes <clockd/*.h> and its own
# headers, and links libclockd (and json-c) alone; tests/clockctl/api.sh
# holds it to that.
bin_PROGRAMS += src/clockctl/clockctl
src_clockctl_clockctl_SOURCES = \
	src/clockctl/clockctl.c src/clockctl/clockctl.h \
	src/clockctl/output.c \
	src/clockctl/status.c \
	src/clockctl/sources.c \
	src/clockctl/tracking.c \
	src/clockctl/time.c \
	src/clockctl/watch.c \
	src/clockctl/timers.c \
	src/clockctl/wait.c \
	src/clockctl/reload.c \
	src/clockctl/metrics.c \
	src/clockctl/run.c
# run: where libclockd-preload.so is installed.
src_clockctl_clockctl_CPPFLAGS = $(AM_CPPFLAGS) -DPKGLIBDIR='"$(pkglibdir)"'
src_clockctl_clockctl_CFLAGS = $(AM_CFLAGS) $(JSONC_CFLAGS)
src_clockctl_clockctl_LDADD = src/libclockd/libclockd.la $(JSONC_LIBS) -lm -ldl
