# Documentation: the man pages and the shipped clockd.conf against the code
# (config table, options, exported symbols), and the man pages' rendering.
TESTS += tests/docs/config-docs.sh
EXTRA_DIST += tests/docs/config-docs.sh
