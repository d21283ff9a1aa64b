# Export to chronyd/ntpd: the NTP SHM segment, the chrony SOCK sender, the
# real chronyd reading both, and the config checks of the export keys.
check_PROGRAMS += tests/export/exptool
tests_export_exptool_SOURCES = tests/export/exptool.c
TESTS += tests/export/config.sh tests/export/shm.sh tests/export/sock.sh tests/export/chrony.sh \
	tests/export/leap.sh \
	tests/export/agree.sh tests/export/serve.sh
EXTRA_DIST += tests/export/lib.sh \
	tests/export/config.sh tests/export/shm.sh tests/export/sock.sh tests/export/chrony.sh tests/export/leap.sh \
	tests/export/agree.sh tests/export/serve.sh
