# Documentation: the man pages and the shipped clockd.conf against the code
# (config table, options, exported symbols), and the man pages' rendering.
TESTS += tests/docs/config-docs.sh
EXTRA_DIST += tests/docs/config-docs.sh
# One version source: --version, clockd_version(), libclockd.pc, the man
# pages, NEWS, debian/changelog and the symbol nodes agree with AC_INIT.
TESTS += tests/docs/version.sh
EXTRA_DIST += tests/docs/version.sh
