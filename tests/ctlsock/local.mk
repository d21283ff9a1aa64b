# The control socket against the real daemon, with a raw protocol client
# (tests/ctlsock/rawclient, no libclockd timer API): hand-over, firing,
# malformed messages, quotas, a killed client, clockctl timers, config.
check_PROGRAMS += tests/ctlsock/rawclient
tests_ctlsock_rawclient_SOURCES = tests/ctlsock/rawclient.c tests/ctlraw.c tests/ctlraw.h
tests_ctlsock_rawclient_LDADD = src/shared/libshared.la
# libclockd's timer statistics and names (0.4) against ctlsock.sh's daemon.
check_PROGRAMS += tests/ctlsock/statsapi
tests_ctlsock_statsapi_SOURCES = tests/ctlsock/statsapi.c
tests_ctlsock_statsapi_LDADD = src/libclockd/libclockd.la tests/libtap.la
TESTS += tests/ctlsock/ctlsock.sh
EXTRA_DIST += tests/ctlsock/ctlsock.sh
