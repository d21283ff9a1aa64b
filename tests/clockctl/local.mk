# clockctl: the CLI against no daemon (usage, help, absent page), against a
# real daemon on a private page (live, stale, gone, valgrind), and its output
# options (CSV, legends, JSON exactness, options anywhere, wait); and that
# it uses libclockd's public API alone (api.sh).
TESTS += tests/clockctl/cli.sh tests/clockctl/daemon.sh tests/clockctl/features.sh \
	tests/clockctl/api.sh tests/clockctl/metrics.sh
EXTRA_DIST += tests/clockctl/cli.sh tests/clockctl/daemon.sh tests/clockctl/features.sh \
	tests/clockctl/api.sh tests/clockctl/lib.sh tests/clockctl/metrics.sh
