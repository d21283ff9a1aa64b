# Device faults and fallback, driven by the simulated device (sim) on the
# host: stalls, steps, spurious and missed pulses, a device missing at start
# or vanishing while running. The real devices are tested under qemu
# (tests/vm, make check-hw).
check_PROGRAMS += tests/devices/monitor
TESTS += tests/devices/faults.sh
EXTRA_DIST += tests/devices/faults.sh

tests_devices_monitor_SOURCES = tests/devices/monitor.c
tests_devices_monitor_LDADD = src/libclockd/libclockd.la
