#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# clockd's command line: --check-config on good and bad files, -c and -o
# errors that name the file, line and key, --help, --version, and
# --help-config listing every key of the table.
: "${top_builddir:?run from make check (top_builddir unset)}"
CLOCKD=$top_builddir/src/clockd/clockd
T=$(mktemp -d "${TMPDIR:-/tmp}/clockd-cmdline.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT
. "$top_srcdir/tests/tap.sh"
KEYS="hz jiffies_wrap_after source posix_clock tick page stale_after_ms tsc_calibrate_ms log_level"


# run ARGS...: clockd's status in $st, output in $T/out and $T/err
run() {
	"$CLOCKD" "$@" >"$T/out" 2>"$T/err"
	st=$?
	sed 's/^/# stderr: /' "$T/err"
}

cat >"$T/good.conf" <<'CONF'
# a good file
hz = 250
page = "/tmp/clockd-cmdline-never-used/page"   # quoted, commented
source = posix
CONF
run --check-config -c "$T/good.conf"
all=0
for k in $KEYS; do grep -q "^$k = " "$T/out" || { echo "# key $k not printed"; all=1; }; done
[ $st -eq 0 ] && [ $all -eq 0 ] && grep -qx "hz = 250" "$T/out" && grep -qx "source = posix" "$T/out" &&
	grep -qx 'page = "/tmp/clockd-cmdline-never-used/page"' "$T/out"
ok $? "--check-config -c good.conf: exit 0, prints every key with the file's values"
[ ! -e /tmp/clockd-cmdline-never-used ]
ok $? "--check-config starts nothing (no page directory made)"

run --check-config -c "$T/good.conf" -o hz=24 -o log_level=debug
[ $st -eq 0 ] && grep -qx "hz = 24" "$T/out" && grep -qx "log_level = debug" "$T/out"
ok $? "-o overrides the file's values"

printf 'hz = 250\nsource = sundial\n\nhz = 300\n' >"$T/bad.conf"
run --check-config -c "$T/bad.conf"
[ $st -ne 0 ] && grep -q "^$T/bad.conf:2: source: 'sundial' is not one of" "$T/err" &&
	grep -q "^$T/bad.conf:4: hz: set more than once" "$T/err" && [ ! -s "$T/out" ]
ok $? "bad file: non-zero exit, every error as FILE:LINE: KEY: why on stderr, nothing on stdout"

run --check-config -c /nonexistent/clockd.conf
[ $st -ne 0 ] && grep -q "/nonexistent/clockd.conf: cannot open" "$T/err"
ok $? "-c /nonexistent: fails, naming the file and why"

run --check-config -o hz=abc
[ $st -ne 0 ] && grep -q "hz: 'abc' is not a number" "$T/err"
ok $? "-o hz=abc: fails naming the key"

run --check-config -o nokey=1
[ $st -ne 0 ] && grep -q "nokey: unknown key" "$T/err"
ok $? "-o nokey=1: fails naming the key"

run --check-config -o hz
[ $st -ne 0 ] && grep -q "hz: expected KEY=VALUE" "$T/err"
ok $? "-o without '=': fails"

run --check-config -o hz=100000 -o jiffies_wrap_after=50000
[ $st -ne 0 ] && grep -q "jiffies_wrap_after" "$T/err"
ok $? "-o hz * jiffies_wrap_after over 2^32: fails naming jiffies_wrap_after"

run --help
[ $st -eq 0 ] && grep -q "^Usage: clockd" "$T/out" && grep -q -- "--check-config" "$T/out" && grep -q -- "--help-config" "$T/out"
ok $? "--help: exit 0, usage on stdout"

run --version
[ $st -eq 0 ] && grep -Eqx "clockd [0-9]+\.[0-9]+.*" "$T/out"
ok $? "--version: exit 0, 'clockd VERSION'"

# The references line comes from the driver table: every driver built in
# (pps, the kernel PPS driver, was once left out), gpio with libgpiod only.
refs=" $(sed -n 's/^references: //p' "$T/out") "
ticks=" $(sed -n 's/^ticks: //p' "$T/out") "
missing=
for r in none system sim phc pps; do
	case $refs in *" $r "*) ;; *) missing="$missing $r" ;; esac
done
case $ticks in *" gpio "*) want_gpio=1 ;; *) want_gpio=0 ;; esac
case $refs in *" gpio "*) has_gpio=1 ;; *) has_gpio=0 ;; esac
[ -z "$missing" ] && [ $want_gpio = $has_gpio ]
ok $? "--version: references from the driver table:$refs(missing:${missing:- none})"

run --no-such-option
[ $st -eq 2 ] && grep -q "Usage" "$T/err"
ok $? "an unknown option: exit 2, usage on stderr"

run --help-config
all=0
for k in $KEYS; do grep -q "^$k  *default " "$T/out" || { echo "# key $k not listed"; all=1; }; done
[ $st -eq 0 ] && [ $all -eq 0 ] && grep -q "^hz .*range 1\.\.100000" "$T/out" &&
	grep -q "^source .*list of auto tsc hpet phc posix sim" "$T/out" && grep -q "^page .*absolute path" "$T/out"
ok $? "--help-config: every key with its default and range/choices"
# Every key --help-config lists is one that --check-config prints, and back.
listed=$(grep -E '^[a-z_]+ +default ' "$T/out" | cut -d' ' -f1 | sort | tr '\n' ' ')
"$CLOCKD" --check-config >"$T/out" 2>/dev/null
printed=$(cut -d' ' -f1 "$T/out" | sort | tr '\n' ' ')
echo "# listed: $listed"
[ -n "$listed" ] && [ "$listed" = "$printed" ]
ok $? "--help-config and --check-config cover the same keys"

finish
