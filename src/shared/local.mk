# Code the daemon, the library and the tools share (never installed).
noinst_LTLIBRARIES += src/shared/libshared.la
src_shared_libshared_la_SOURCES = \
	src/shared/latch.c src/shared/latch.h src/shared/pagetime.h \
	src/shared/tickmath.c src/shared/tickmath.h \
	src/shared/tsc.h \
	src/shared/log.c src/shared/log.h \
	src/shared/config.c src/shared/config.h \
	src/shared/simscript.c src/shared/simscript.h \
	src/shared/ring.c src/shared/ring.h \
	src/shared/ctlproto.c src/shared/ctlproto.h \
	src/shared/timerrec.c src/shared/timerrec.h \
	src/shared/paths.h \
	src/shared/devnames.h
