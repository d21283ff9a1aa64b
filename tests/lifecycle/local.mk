# Issue #26 items 6-11: the daemon's and the library's life cycle (quotas,
# fork, a full page directory, CPU hotplug, restarts with another
# configuration, and the small ones).
TESTS += tests/lifecycle/fullpage.sh
EXTRA_DIST += tests/lifecycle/fullpage.sh
