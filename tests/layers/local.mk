# The tree's dependency rule and the page's single writer (README,
# "Architecture"), checked on the sources and the built daemon.
TESTS += tests/layers/deps.sh
EXTRA_DIST += tests/layers/deps.sh
