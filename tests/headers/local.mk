# The public headers as users compile them: strict C99/C11 and C++98/C++11,
# -pedantic, alone and together, with the Cflags of libclockd.pc.
TESTS += tests/headers/compile.sh
EXTRA_DIST += tests/headers/compile.sh
