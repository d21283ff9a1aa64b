# The control socket against the real daemon, with a raw protocol client
# (tests/ctlsock/rawclient, no libclockd timer API): hand-over, firing,
# malformed messages, quotas, a killed client, clockctl timers, config.
check_PROGRAMS += tests/ctlsock/rawclient
tests_ctlsock_rawclient_SOURCES = tests/ctlsock/rawclient.c tests/ctlraw.c tests/ctlraw.h
tests_ctlsock_rawclient_LDADD = src/shared/libshared.la
TESTS += tests/ctlsock/ctlsock.sh
EXTRA_DIST += tests/ctlsock/ctlsock.sh
