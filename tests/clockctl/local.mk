# clockctl: the CLI against no daemon (usage, help, absent page) and
# against a real daemon on a private page (live, stale, gone, valgrind).
TESTS += tests/clockctl/cli.sh tests/clockctl/daemon.sh
EXTRA_DIST += tests/clockctl/cli.sh tests/clockctl/daemon.sh tests/clockctl/lib.sh
