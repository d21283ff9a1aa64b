#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The project's one entry point for set-up, build, run and test on a fresh
# Debian 12 machine (as root; packages are installed with apt when missing).
#
#   build-aux/ci.sh run    install what is missing, build, run clockd in the
#                          foreground on its embedded defaults (Ctrl-C stops)
#   build-aux/ci.sh test   install what is missing, then the whole suite:
#                          -Werror build (and the benchmarks' programs,
#                          not run) + make check, the TSan variant +
#                          make check-tsan, cppcheck, the fuzzers (30 s,
#                          side by side: 20 s of a CPU each),
#                          make distcheck with its build under ASan/UBSan
#                          (the whole suite again, from the tarball),
#                          the Debian packages (build-aux/deb.sh: built as
#                          a user, lintian), make check-hw
#                          (Debian's kernel under qemu: HPET, RTC, GPIO;
#                          then CPU hotplug in a guest of 2 CPUs)
#                          and beside it make check-systemd (the .debs
#                          installed under systemd as PID 1 in a qemu
#                          guest; its root file system from mmdebstrap,
#                          cached in /var/cache/clockd-vm), then a second
#                          build on libgpiod 2.x (built from the upstream
#                          tarball, $LIBGPIOD2_TARBALL, default
#                          ../shared/deps/libgpiod-2.2.4.tar.gz, into
#                          build-gpiod2/prefix, kept) and its gpio checks
#   build-aux/ci.sh bench  install, build, make bench
set -eu
cd "$(dirname "$0")/.."
top=$(pwd)
mode=${1:-test}
jobs=$(nproc 2>/dev/null || echo 2)

PACKAGES="build-essential autoconf automake libtool pkg-config
libevent-dev libsystemd-dev libjson-c-dev libgpiod-dev
g++ gcc-multilib libtsan2 jq autoconf-archive valgrind groff-base man-db xz-utils qemu-user
qemu-system-x86 cpio libelf1 libssl3 chrony clang-14 cppcheck systemd rt-tests
mmdebstrap e2fsprogs dpkg-dev debhelper fakeroot lintian prometheus python3-prometheus-client gnuplot-nox
procps util-linux"

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

# libgpiod 2.x, which Debian 12 does not ship, built from the unmodified
# upstream release into a private prefix (kept between runs: the prefix is
# the cache), for a second clockd build on the v2 API. Prints the prefix.
GPIOD2_VERSION=2.2.4
GPIOD2_TARBALL=${LIBGPIOD2_TARBALL:-$top/../shared/deps/libgpiod-$GPIOD2_VERSION.tar.gz}
gpiod2() {
	dir=$top/build-gpiod2 prefix=$top/build-gpiod2/prefix
	if [ ! -f "$prefix/lib/pkgconfig/libgpiod.pc" ]; then
		if [ ! -f "$GPIOD2_TARBALL" ]; then
			echo "ci.sh: $GPIOD2_TARBALL is missing (set LIBGPIOD2_TARBALL)" >&2
			exit 1
		fi
		rm -rf "$dir/libgpiod-$GPIOD2_VERSION"
		mkdir -p "$dir"
		tar -xzf "$GPIOD2_TARBALL" -C "$dir"
		# A git archive: autogen.sh (autoconf-archive) makes configure.
		(cd "$dir/libgpiod-$GPIOD2_VERSION" && NOCONFIGURE=1 ./autogen.sh &&
			./configure --prefix="$prefix" --disable-static --enable-tools=no --enable-bindings-cxx=no \
				--enable-bindings-python=no --enable-tests=no &&
			make -j"$jobs" && make install) >"$dir/build.log" 2>&1 || {
			tail -n 30 "$dir/build.log" >&2
			echo "ci.sh: libgpiod $GPIOD2_VERSION did not build (log: $dir/build.log)" >&2
			exit 1
		}
	fi
	echo "$prefix"
}

# failed_logs DIR: show the logs of the tests that failed under DIR
failed_logs() {
	find "$1" -name '*.log' -path '*tests/*' -exec grep -l -E '^(not ok|Bail out)|^# (FAIL|ERROR): [1-9]|ThreadSanitizer' {} + 2>/dev/null |
		while read -r log; do echo "==== $log"; tail -n 60 "$log"; done
}

# check DIR: make check, showing the logs of failures
check() {
	if ! (cd "$1" && make -j"$jobs" check); then
		failed_logs "$1/tests"
		exit 1
	fi
}

# stage NAME: the previous stage's time, and NAME's heading
stage_t=
stage() {
	now=$(date +%s)
	[ -z "$stage_t" ] || echo "ci.sh: ($((now - stage_t)) s)"
	stage_t=$now
	[ -z "$1" ] || echo "== $1"
}

# hw_passed LOG: make check-hw ran and passed. A skip would hide a broken
# harness: in CI it must run and pass.
hw_passed() {
	if grep -q '^1\.\.0 # SKIP' "$1" || grep -q '^not ok' "$1" || ! grep -q '^1\.\.[1-9]' "$1"; then
		echo "ci.sh: a qemu check did not pass ($1)" >&2
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
	stage "build (-Werror), the benchmarks' programs and make check"
	build build
	(cd build && make -j"$jobs" bench-programs)
	check build
	stage "TSan variant (configure --enable-tsan) and make check-tsan"
	build build-tsan --enable-tsan
	if ! (cd build-tsan && make check-tsan); then
		failed_logs build-tsan/tests
		exit 1
	fi
	stage "cppcheck (build-aux/cppcheck.sh)"
	build-aux/cppcheck.sh
	stage "fuzzing, the three harnesses side by side for 30 s (tests/fuzz/run.sh)"
	FUZZ_OUT=$top/build/fuzz tests/fuzz/run.sh 30
	# The tarball's own build is the ASan + UBSan one: the whole suite
	# runs under the sanitizers from a read-only source tree, once.
	stage "make distcheck, its build under ASan + UBSan (make check again)"
	san="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g -O1"
	if ! (cd build && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
		make -j"$jobs" distcheck \
		DISTCHECK_CONFIGURE_FLAGS="--enable-werror CFLAGS='$san' LDFLAGS='-fsanitize=address,undefined'"); then
		failed_logs build/clockd-*/_build
		exit 1
	fi
	stage "Debian packages (build-aux/deb.sh: as user builder, then lintian; .debs in build/deb)"
	build-aux/deb.sh "$top/build/deb"
	# The two qemu guests of this build at once, each on a core of its
	# own (TCG runs a guest on one host thread): check-systemd in the
	# background, its output shown when it is done. The cache they share
	# is filled first, by one process (a cold one downloads the kernel
	# and builds the systemd root: minutes).
	stage "make check-hw and make check-systemd, side by side (qemu; downloads and roots cached in /var/cache/clockd-vm)"
	sh tests/vm/fetch.sh >/dev/null
	sh tests/vm/sd-rootfs.sh >/dev/null
	# The guest installs the packages deb.sh built (CLOCKD_VM_DEBS; without
	# it, the build's make install tree).
	(cd build && make tests/vm/sd-arm >/dev/null && CLOCKD_VM_DEBS=$top/build/deb make check-systemd) \
		>build/check-systemd.log 2>&1 &
	sd_pid=$!
	(cd build && CLOCKD_VM_GPIOD=v1 make check-hw) | tee build/check-hw.log
	# CPU hotplug, make check's opt-in test, in a 2-CPU guest (~25 s).
	echo "== make check-hw, CPU hotplug (CLOCKD_VM_CHECKS=hotplug: a guest of 2 CPUs)"
	(cd build && CLOCKD_VM_CHECKS=hotplug make check-hw) | tee build/check-hotplug.log
	sd_status=0
	wait "$sd_pid" || sd_status=$?
	echo "== make check-systemd (clockd's units under systemd as PID 1; ran beside check-hw)"
	cat build/check-systemd.log
	[ "$sd_status" -eq 0 ] || { echo "ci.sh: make check-systemd failed (status $sd_status)" >&2; exit 1; }
	hw_passed build/check-hw.log
	hw_passed build/check-hotplug.log
	hw_passed build/check-systemd.log
	stage "libgpiod $GPIOD2_VERSION (v2 API): a clockd build on it, make check-hw's gpio checks"
	gpiod2_prefix=$(gpiod2)
	PKG_CONFIG_PATH=$gpiod2_prefix/lib/pkgconfig build build-gpiod2/build
	build-gpiod2/build/src/clockd/clockd --version | grep -q '^libgpiod: 2\..*(v2 API)$' || {
		echo "ci.sh: the clockd of build-gpiod2/build does not run libgpiod 2 (v2 API)" >&2
		exit 1
	}
	(cd build-gpiod2/build && CLOCKD_VM_CHECKS=gpio CLOCKD_VM_GPIOD=v2 make check-hw) |
		tee build-gpiod2/check-hw.log
	hw_passed build-gpiod2/check-hw.log
	stage ""
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
