#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The public headers, <clockd/clockd.h> and <clockd/page.h>, compiled as a
# user's program compiles them: each alone, both in either order, and after
# a C library header, as strict ISO C99 and C11 and as C++98 and C++11,
# with -pedantic -Wall -Wextra -Werror and no feature-test macro, and with
# only the Cflags the installed libclockd.pc gives. Each case also uses the
# POSIX types of the prototypes (struct timespec, struct itimerspec, union
# sigval, clockid_t) and the inline functions, so a header that compiles but
# hides a type the caller needs fails too. With the project's compilers
# (CC and CXX of the build); skipped (77) only when there is no C++ compiler.
# TAP; $top_srcdir and $top_builddir come from the test harness.
set -u
: "${top_srcdir:?}" "${top_builddir:?}"

. "$top_srcdir/tests/tap.sh"

cc=$(sed -n 's/^CC = //p' "$top_builddir/Makefile")
cxx=$(sed -n 's/^CXX = //p' "$top_builddir/Makefile")
pkgconfig=$(sed -n 's/^PKG_CONFIG = //p' "$top_builddir/Makefile")
if [ -z "$cc" ]; then
	echo "Bail out! no CC recorded in $top_builddir/Makefile"
	exit 99
fi
# configure names g++ even when there is none: ask the compiler itself.
if [ -z "$cxx" ] || ! echo 'int main() { return 0; }' | $cxx -x c++ -fsyntax-only - 2>/dev/null; then
	skip_all "no working C++ compiler (CXX='$cxx')"
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/clockd-headers.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT

# The Cflags of libclockd.pc, with its includedir pointed at the source
# tree: they must be the include path and nothing else (no -D the user
# would need, no -std).
pc=$top_builddir/src/libclockd/libclockd.pc
if cflags=$($pkgconfig --define-variable=includedir="$top_srcdir/include" --cflags "$pc" 2>"$T/pc.log"); then
	cflags=$(echo $cflags)
	if [ "$cflags" = "-I$top_srcdir/include" ]; then
		pass "libclockd.pc Cflags are the include path only ($cflags)"
	else
		fail "libclockd.pc Cflags are the include path only (got: $cflags)"
	fi
else
	fail "pkg-config reads $pc"
	sed 's/^/# /' "$T/pc.log"
	cflags=-I$top_srcdir/include
fi

# The body: uses what each header gives.
use_clockd='
static void on_expiry(union sigval v) { (void)v; }
static int use_clockd(void)
{
	struct timespec ts;
	struct itimerspec its;
	struct clockd_sigevent sev;
	struct clockd_status st;
	struct clockd_device dev[2];
	clockid_t id = CLOCKD_MONOTONIC;
	sev.notify = CLOCKD_SIGEV_THREAD_CPU;
	sev.signo = 0;
	sev.cpu = -1;
	sev.fn = on_expiry;
	sev.value.sival_ptr = &its;
	its.it_value.tv_sec = 1;
	its.it_value.tv_nsec = 0;
	its.it_interval = its.it_value;
	/* constant ids: the inline reads in C, calls in C++, where a
	 * qualified name must work too */
	int inl = clockd_clock_gettime(CLOCKD_MONOTONIC_COARSE, &ts) +
		  clockd_clock_gettime(CLOCKD_MONOTONIC, &ts) + (int)clockd_get_jiffies_64() +
		  (int)clockd_jiffies();
#ifdef __cplusplus
	inl += ::clockd_clock_gettime(CLOCKD_REALTIME, &ts) + (int)::clockd_get_jiffies_64();
#endif
	return inl + clockd_clock_gettime(id, &ts) + clockd_time_after(1u, 2u) +
	       clockd_time_before_eq64(1u, 2u) + clockd_status(&st, sizeof(st)) +
	       clockd_devices2(dev, sizeof(dev[0]), 2) + (int)sizeof(sev) +
	       (st.state == CLOCKD_STATE_GONE);
}'
use_page='
static int use_page(void)
{
	struct clockd_page p;
	p.magic = CLOCKD_PAGE_MAGIC;
	return (int)sizeof(p) + (int)p.magic + (int)CLOCKD_PAGE_MAX_DEVICES;
}'

# case NAME INCLUDE...: one source per language, compiled every way.
case_src() {
	name=$1; shift
	{
		for h in "$@"; do echo "#include <$h>"; done
		calls=0
		for h in "$@"; do
			case $h in
			clockd/clockd.h) echo "$use_clockd"; calls="$calls + use_clockd()" ;;
			clockd/page.h) echo "$use_page"; calls="$calls + use_page()" ;;
			esac
		done
		echo "int main(void) { return $calls; }"
	} >"$T/$name.c"
	cp "$T/$name.c" "$T/$name.cc"
}

c_warn="-pedantic -Wall -Wextra -Werror -Wundef -Wshadow -Wstrict-prototypes \
-Wmissing-prototypes -Wcast-qual -Wwrite-strings"
# Not -Wshadow in C++: clockd_status() and clockd_tracking() share their
# names with their structs, as stat() does (g++ calls that hiding); not
# -Wold-style-cast: the header is C, and its casts are C's.
cxx_warn="-pedantic -Wall -Wextra -Werror -Wundef -Wcast-qual"
m32=no
echo 'int main(void) { return 0; }' >"$T/m32.c"
$cc -m32 -o "$T/m32" "$T/m32.c" 2>/dev/null && m32=yes

compile() {
	what=$1 src=$2; shift 2
	# shellcheck disable=SC2086 # flags are words
	if "$@" $cflags -fsyntax-only "$src" >"$T/log" 2>&1; then
		pass "$what"
	else
		fail "$what"
		sed 's/^/# /' "$T/log" | head -n 20
	fi
}

for c in "clockd:clockd/clockd.h" "page:clockd/page.h" \
	"both:clockd/clockd.h clockd/page.h" "both-rev:clockd/page.h clockd/clockd.h" \
	"after-libc:stdio.h signal.h time.h clockd/page.h clockd/clockd.h"; do
	name=${c%%:*}
	# shellcheck disable=SC2086 # the header list is words
	case_src "$name" ${c#*:}
	hdrs=$(echo "${c#*:}" | tr ' ' ',')
	for std in c99 c11; do
		# shellcheck disable=SC2086
		compile "$hdrs as -std=$std $c_warn" "$T/$name.c" $cc -std=$std $c_warn
	done
	for std in c++98 c++11; do
		# shellcheck disable=SC2086
		compile "$hdrs as -std=$std $cxx_warn" "$T/$name.cc" $cxx -x c++ -std=$std $cxx_warn
	done
	if [ $m32 = yes ]; then
		# shellcheck disable=SC2086
		compile "$hdrs as -m32 -std=c99 (the i386 layout of the page)" "$T/$name.c" \
			$cc -m32 -std=c99 $c_warn
	fi
done

# The checks are real: a wrong offset in page.h fails in every language.
sed 's/CLOCKD_PAGE_ASSERT_OFF(clockd_page, seq, 256)/CLOCKD_PAGE_ASSERT_OFF(clockd_page, seq, 257)/' \
	"$top_srcdir/include/clockd/page.h" >"$T/bad-page.h"
if ! grep -q 'seq, 257' "$T/bad-page.h"; then
	fail "page.h checks the offset of seq (the test's edit did not apply)"
else
	echo '#include "bad-page.h"' >"$T/bad.c"
	cp "$T/bad.c" "$T/bad.cc"
	for v in "c99:c:$cc -std=c99" "c11:c:$cc -std=c11" "c++98:cc:$cxx -x c++ -std=c++98" \
		"c++11:cc:$cxx -x c++ -std=c++11"; do
		lang=${v%%:*} rest=${v#*:}
		ext=${rest%%:*} comp=${rest#*:}
		# shellcheck disable=SC2086 # the compiler command is words
		if (cd "$T" && $comp -fsyntax-only "bad.$ext") >"$T/log" 2>&1; then
			fail "a wrong offset in page.h fails to compile as $lang"
		elif grep -q 'clockd_page' "$T/log"; then
			pass "a wrong offset in page.h fails to compile as $lang"
		else
			fail "a wrong offset in page.h fails to compile as $lang, naming the check"
			sed 's/^/# /' "$T/log" | head -n 10
		fi
	done
fi

finish
