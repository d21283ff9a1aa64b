# Code the daemon, the library and the tools share (never installed), as
# two convenience libraries, each built once: what the client library
# needs (the latch, the rings, the timer records, the protocol codec), and
# the rest on top of it for the daemon and the tests.
noinst_LTLIBRARIES += src/shared/libshared-client.la src/shared/libshared.la
src_shared_libshared_client_la_SOURCES = \
	src/shared/latch.c src/shared/latch.h src/shared/pagetime.h \
	src/shared/ring.c src/shared/ring.h \
	src/shared/timerrec.c src/shared/timerrec.h \
	src/shared/ctlproto.c src/shared/ctlproto.h \
	src/shared/tickmath.h src/shared/tsc.h \
	src/shared/timens.c src/shared/timens.h \
	src/shared/paths.h
src_shared_libshared_la_SOURCES = \
	src/shared/tickmath.c \
	src/shared/log.c src/shared/log.h \
	src/shared/config.c src/shared/config.h \
	src/shared/simscript.c src/shared/simscript.h \
	src/shared/devnames.h
src_shared_libshared_la_LIBADD = src/shared/libshared-client.la
