# Configuration: the parser (config_load/config_write) and clockd's
# command line (--check-config, -c, -o, --help, --help-config, --version).
check_PROGRAMS += tests/config/config
TESTS += tests/config/config tests/config/cmdline.sh tests/config/include.sh tests/config/examples.sh
EXTRA_DIST += tests/config/cmdline.sh tests/config/include.sh tests/config/examples.sh
tests_config_config_SOURCES = tests/config/config.c
tests_config_config_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests
tests_config_config_LDADD = src/shared/libshared.la tests/libtap.la
