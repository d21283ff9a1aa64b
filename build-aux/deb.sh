#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Build the Debian packages (debian/) from a clean copy of HEAD as a user
# that is not root, then run lintian on them.
#
#   build-aux/deb.sh [OUTDIR]
#
# As root: the build user ($DEB_USER, default builder) is created if
# missing, the build dependencies are installed with apt if missing, and
# the build runs as that user in a directory it owns. As any other user:
# the build runs as that user (the build dependencies must be installed).
# The tree is `git archive HEAD` (what is committed, nothing else). The
# .debs, the .changes and .buildinfo files, the build log and lintian's
# output (lintian.txt) are left in OUTDIR (default build/deb). Fails if
# the build fails or lintian reports an error; lintian's warnings are
# printed and kept in lintian.txt. DEB_BUILD_OPTIONS passes through
# (nocheck skips debian/rules' short test subset).
set -eu
cd "$(dirname "$0")/.."
top=$(pwd)
out=${1:-$top/build/deb}
user=${DEB_USER:-builder}
start=$(date +%s)

command -v git >/dev/null 2>&1 && git rev-parse --verify -q HEAD >/dev/null ||
	{ echo "deb.sh: needs a git checkout (it builds git archive HEAD)" >&2; exit 1; }
version=$(sed -n '1s/^clockd (\([^)]*\)).*/\1/p' debian/changelog)
upstream=${version%-*}

if [ "$(id -u)" -eq 0 ]; then
	if ! id -u "$user" >/dev/null 2>&1; then
		echo "deb.sh: creating the build user $user"
		useradd --create-home --shell /bin/sh "$user"
	fi
	# The build dependencies (debian/control), and the tools.
	missing=$(dpkg-checkbuilddeps 2>&1 | sed -n 's/.*Unmet build dependencies: //p' |
		sed 's/([^)]*)//g; s/|[^ ]*//g')
	for p in dpkg-dev debhelper fakeroot lintian; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing="$missing $p"
	done
	if [ -n "$(echo $missing)" ]; then
		echo "deb.sh: installing$missing"
		# shellcheck disable=SC2086
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
	fi
	as_user() { runuser -u "$user" -- env HOME="$(getent passwd "$user" | cut -d: -f6)" "$@"; }
else
	user=$(id -un)
	as_user() { "$@"; }
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/clockd-deb.XXXXXX")
trap 'rm -rf "$work"' EXIT
src=$work/clockd-$upstream
mkdir "$src"
git archive --format=tar HEAD | tar -x -C "$src"
[ "$(id -u)" -ne 0 ] || chown -R "$user:" "$work"

echo "deb.sh: building clockd $version as $user in $src"
if ! as_user sh -c 'cd "$1" && dpkg-buildpackage -us -uc -b' sh "$src" >"$work/build.log" 2>&1; then
	tail -n 80 "$work/build.log"
	mkdir -p "$out" && cp "$work/build.log" "$out/"
	echo "deb.sh: dpkg-buildpackage failed (log: $out/build.log)" >&2
	exit 1
fi
# The symbols file against the library as built: no symbol or library
# appeared or disappeared (dpkg-gensymbols' diff; an optional pattern that
# matched nothing is no mismatch).
if grep -q 'dpkg-gensymbols: .*\(appeared\|disappeared\)' "$work/build.log"; then
	grep -A 40 'dpkg-gensymbols: warning' "$work/build.log"
	echo "deb.sh: debian/libclockd1.symbols does not match the library (above)" >&2
	exit 1
fi

mkdir -p "$out"
rm -f "$out"/*.deb "$out"/*.changes "$out"/*.buildinfo
cp "$work"/*.deb "$work"/*.changes "$work"/*.buildinfo "$work/build.log" "$out/"
changes=$(ls "$work"/*.changes)
st=0
as_user lintian --fail-on error "$changes" >"$out/lintian.txt" 2>&1 || st=$?
echo "deb.sh: lintian ($(grep -c '^E: ' "$out/lintian.txt") errors, $(grep -c '^W: ' "$out/lintian.txt") warnings):"
sed 's/^/  /' "$out/lintian.txt"
ls -l "$out"/*.deb
echo "deb.sh: done in $(($(date +%s) - start)) s; packages in $out"
exit $st
