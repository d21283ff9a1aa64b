# Documentation: the man pages and the shipped clockd.conf against the code
# (config table, options, exported symbols), and the man pages' rendering.
TESTS += tests/docs/config-docs.sh
EXTRA_DIST += tests/docs/config-docs.sh
# One version source: --version, clockd_version(), libclockd.pc, the man
# pages, NEWS, debian/changelog and the symbol nodes agree with AC_INIT.
TESTS += tests/docs/version.sh
EXTRA_DIST += tests/docs/version.sh
# Comments name only files that exist; every shell test uses tests/tap.sh.
TESTS += tests/docs/comments.sh tests/docs/harness.sh
EXTRA_DIST += tests/docs/comments.sh tests/docs/harness.sh tests/docs/external-names
