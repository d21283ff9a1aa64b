#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The project's one entry point for set-up, build, run and test on a fresh
# Debian 12 machine (as root; packages are installed with apt when missing).
#
#   build-aux/ci.sh run    install what is missing, build, run clockd in the
#                          foreground on its embedded defaults (Ctrl-C stops)
#   build-aux/ci.sh test   install what is missing, then the whole suite:
#                          -Werror build + make check, an ASan/UBSan build +
#                          make check, cppcheck, 20 s of each fuzzer,
#                          make distcheck, the Debian packages
#                          (build-aux/deb.sh: built as a user, lintian),
#                          and make check-hw (Debian's kernel under qemu:
#                          HPET, RTC, GPIO)
#   build-aux/ci.sh bench  install, build, make bench
set -eu
cd "$(dirname "$0")/.."
top=$(pwd)
mode=${1:-test}
jobs=$(nproc 2>/dev/null || echo 2)

PACKAGES="build-essential autoconf automake libtool pkg-config
libevent-dev libsystemd-dev libjson-c-dev libgpiod-dev
gcc-multilib libtsan2 jq valgrind groff-base man-db xz-utils qemu-user
qemu-system-x86 cpio libelf1 libssl3 chrony clang-14 cppcheck systemd rt-tests
dpkg-dev debhelper fakeroot lintian"

deps() {
	missing=
	for p in $PACKAGES; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing="$missing $p"
	done
	[ -z "$missing" ] && return 0
	if [ "$(id -u)" -ne 0 ]; then
		echo "ci.sh: missing packages:$missing (run as root, or install them)" >&2
		exit 1
	fi
	echo "ci.sh: installing$missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# The tests run chronyd themselves (with -x): keep the package's
	# service from starting and steering this machine's clock.
	policy=
	if [ ! -e /usr/sbin/policy-rc.d ]; then
		printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
		chmod 755 /usr/sbin/policy-rc.d
		policy=1
	fi
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $missing >/dev/null
	st=$?
	[ -z "$policy" ] || rm -f /usr/sbin/policy-rc.d
	[ $st -eq 0 ] || exit $st
}

# build DIR [configure args...]
build() {
	dir=$1; shift
	[ -x configure ] && [ -f build-aux/tap-driver.sh ] || ./autogen.sh
	mkdir -p "$dir"
	(cd "$dir" && { [ -f Makefile ] || "$top/configure" --enable-werror "$@"; } && make -j"$jobs")
}

# check DIR: make check, showing the logs of failures
check() {
	if ! (cd "$1" && make -j"$jobs" check); then
		find "$1/tests" -name '*.log' -exec grep -l -E '^(not ok|Bail out)|^# (FAIL|ERROR): [1-9]' {} + 2>/dev/null |
			while read -r log; do echo "==== $log"; tail -n 60 "$log"; done
		exit 1
	fi
}

case $mode in
run)
	deps
	build build
	mkdir -p /run/clockd
	echo "ci.sh: starting clockd (page /run/clockd/page); try: build/src/clockctl/clockctl status"
	exec build/src/clockd/clockd
	;;
test)
	deps
	start=$(date +%s)
	echo "== build (-Werror) and make check"
	build build
	check build
	echo "== ASan + UBSan build and make check"
	san="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g -O1"
	build build-asan CFLAGS="$san" LDFLAGS="-fsanitize=address,undefined"
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 check build-asan
	echo "== cppcheck (build-aux/cppcheck.sh)"
	build-aux/cppcheck.sh
	echo "== fuzzing, 20 s per harness (tests/fuzz/run.sh)"
	FUZZ_OUT=$top/build/fuzz tests/fuzz/run.sh 20
	echo "== make distcheck"
	(cd build && make -j"$jobs" distcheck DISTCHECK_CONFIGURE_FLAGS=--enable-werror)
	echo "== Debian packages (build-aux/deb.sh: as user builder, then lintian; .debs in build/deb)"
	build-aux/deb.sh "$top/build/deb"
	echo "== make check-hw (Debian's kernel under qemu; downloads cached in /var/cache/clockd-vm)"
	(cd build && make check-hw) | tee build/check-hw.log
	# A skip would hide a broken harness: in CI it must run and pass.
	if grep -q '^1\.\.0 # SKIP' build/check-hw.log || grep -q '^not ok' build/check-hw.log ||
	   ! grep -q '^1\.\.[1-9]' build/check-hw.log; then
		echo "ci.sh: make check-hw did not pass" >&2
		exit 1
	fi
	echo "ci.sh: all passed in $(($(date +%s) - start)) s"
	;;
bench)
	deps
	build build
	(cd build && make bench)
	;;
*)
	echo "usage: $0 run|test|bench" >&2
	exit 2
	;;
esac
