# Example programs, built by make check (tests/libtimers/example.sh runs
# the libevent one against a daemon).
check_PROGRAMS += examples/libevent-timers
examples_libevent_timers_SOURCES = examples/libevent-timers.c
examples_libevent_timers_CFLAGS = $(AM_CFLAGS) $(LIBEVENT_CFLAGS)
examples_libevent_timers_LDADD = src/libclockd/libclockd.la $(LIBEVENT_LIBS)
# Installed for reading, with the documentation: $(docdir)/examples.
examplesdir = $(docdir)/examples
dist_examples_DATA = examples/libevent-timers.c
# Scenario configurations (drop-in files for /etc/clockd.conf.d), checked
# by tests/config/examples.sh: $(docdir)/examples/conf.
exampleconfdir = $(docdir)/examples/conf
dist_exampleconf_DATA = examples/conf/gpio-pps.conf examples/conf/phc.conf \
	examples/conf/hpet.conf examples/conf/chrony-export.conf examples/conf/kernel-pps.conf \
	examples/conf/system.conf
