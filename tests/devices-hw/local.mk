# The hardware drivers' error paths that need no hardware: a missing or
# wrong device, a rate the device would refuse. One clear message each.
# (The drivers on real devices: tests/vm, make check-hw.)
TESTS += tests/devices-hw/errors.sh
EXTRA_DIST += tests/devices-hw/errors.sh
