# clockd as a systemd service, tested with systemd's own tools and no PID 1:
# sd_notify messages (a NOTIFY_SOCKET listener), socket activation
# (systemd-socket-activate), privilege drop, reload with a broken
# configuration, and the installed files (make install DESTDIR=,
# systemd-analyze verify and security).
check_PROGRAMS += tests/service/notify-listen
tests_service_notify_listen_SOURCES = tests/service/notify-listen.c
tests_service_notify_listen_LDADD = src/libclockd/libclockd.la
check_PROGRAMS += tests/service/logrepeat
tests_service_logrepeat_SOURCES = tests/service/logrepeat.c
tests_service_logrepeat_LDADD = tests/libtap.la src/shared/libshared.la
TESTS += tests/service/logrepeat tests/service/notify.sh tests/service/activate.sh tests/service/privilege.sh \
	tests/service/reload.sh tests/service/install.sh tests/service/statlog.sh \
	tests/service/container.sh
EXTRA_DIST += tests/service/notify.sh tests/service/activate.sh tests/service/privilege.sh \
	tests/service/reload.sh tests/service/install.sh tests/service/lib.sh tests/service/statlog.sh \
	tests/service/container.sh
