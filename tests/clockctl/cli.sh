#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# clockctl without a daemon: help, version, usage errors (exit 2), and a
# page that does not exist (every verb that reads the daemon exits 1;
# status prints its report first).
. "$top_srcdir/tests/clockctl/lib.sh"

verbs="status time sources tracking jiffies watch timers wait metrics reload run help"
nopage=$tmp/no-such-dir/page

# --- help and version ---
run --help
check $? "--help exits 0"
missing=
for v in $verbs; do
	grep -Eq "^  $v( |\$)" "$tmp/out" || missing="$missing $v"
done
[ -z "$missing" ]
check $? "--help lists every verb (missing:${missing:-none})"
grep -q '^  1 ' "$tmp/out" && grep -q '^  2 ' "$tmp/out" && grep -q '^  3  reload: ' "$tmp/out"
check $? "--help documents the exit status"

"$CLOCKCTL" --help >"$tmp/help1"
"$CLOCKCTL" help >"$tmp/help2"
cmp -s "$tmp/help1" "$tmp/help2"
ok $? "the help verb prints the same as --help"

run --json help
cp "$tmp/out" "$tmp/help.json"
names=$(jq -r '.[].name' "$tmp/out" 2>/dev/null | tr '\n' ' ')
[ "$names" = "$verbs " ]
check $? "--json help lists the verb table: $names"

version=$(sed -n 's/^#define PACKAGE_VERSION "\(.*\)"$/\1/p' "$top_builddir/config.h")
run --version
[ "$rc" -eq 0 ] && grep -qx "clockctl $version (libclockd $version)" "$tmp/out"
check $? "--version prints clockctl and libclockd $version"
run -V
[ "$rc" -eq 0 ] && grep -q "^clockctl $version" "$tmp/out"
check $? "-V is --version"
run --json --version
[ "$(jq -r '.clockctl + " " + .libclockd' "$tmp/out" 2>/dev/null)" = "$version $version" ]
check $? "--json --version"

# --- usage errors: exit 2, one line on stderr with a hint, no output ---
usage_case() { # usage_case DESCRIPTION ARGS...
	desc=$1
	shift
	run --page "$nopage" "$@"
	[ "$rc" -eq 2 ] && one_error_line && grep -q -- '--help' "$tmp/err" && [ ! -s "$tmp/out" ]
	check $? "usage error exits 2 with one line on stderr: $desc"
}
usage_case "unknown verb" frobnicate
usage_case "watch -i abc" watch -i abc
usage_case "watch -i -1" watch -i -1
usage_case "watch -i 0" watch -i 0
usage_case "watch --interval=nan" watch --interval=nan
usage_case "watch -n -1" watch -n -1
usage_case "watch -n 2x" watch -n 2x
usage_case "watch -i without its value" watch -i
usage_case "unknown watch option" watch --bogus
usage_case "unknown global option" --bogus
usage_case "unknown short option" -x
usage_case "--json=1" --json=1
usage_case "argument to status" status extra
usage_case "empty --page" --page ""
usage_case "--json and --csv" --json status --csv
usage_case "--page without its value, after the verb" status --page
usage_case "wait --timeout abc" wait --timeout abc
usage_case "wait --timeout -1" wait --timeout -1
usage_case "unknown wait option" wait --bogus
usage_case "timers --socket ''" timers --socket ""
run --page "$nopage" -- status
[ "$rc" -eq 1 ] && grep -Eq 'state: +absent' "$tmp/out"
check $? "-- before the verb ends the options: clockctl -- status"
run --page "$nopage" frobnicate
grep -q 'frobnicate' "$tmp/err"
check $? "the unknown verb is named in the message"
run --page "$nopage" watch -i abc
grep -q "'abc'" "$tmp/err"
check $? "the bad interval is named in the message"

# --- no page: the daemon cannot answer ---
for verb in time jiffies sources tracking timers watch; do
	run --page "$nopage" $verb
	[ "$rc" -eq 1 ] && one_error_line && grep -qF "$nopage" "$tmp/err" &&
		grep -q 'No such file' "$tmp/err"
	check $? "$verb without a page exits 1 naming the page and the reason"
	run --page "$nopage" --json $verb
	[ "$rc" -eq 1 ] && one_error_line && [ ! -s "$tmp/out" ]
	check $? "--json $verb without a page exits 1, nothing on stdout"
done

run --page "$nopage" status
[ "$rc" -eq 1 ] && grep -Eq 'state: +absent' "$tmp/out" && grep -q 'No such file' "$tmp/out" &&
	grep -qF "$nopage" "$tmp/out" && one_error_line
check $? "status without a page says absent, why and where, exits 1"

run --page "$nopage"
[ "$rc" -eq 1 ] && grep -Eq 'state: +absent' "$tmp/out"
check $? "status is the default verb"

run --page "$nopage" --json status
[ "$rc" -eq 1 ] &&
	jq -e --arg p "$nopage" '.state == "absent" and .page == $p and .errno == 2 and
		(.error | test("No such file"))' "$tmp/out" >/dev/null
check $? "--json status without a page: state absent, page, errno 2"

# The page comes from $CLOCKD_SHM, and --page overrides it.
CLOCKD_SHM=$nopage "$CLOCKCTL" --json status >"$tmp/out" 2>"$tmp/err"
rc=$?
jq -e --arg p "$nopage" '.page == $p' "$tmp/out" >/dev/null
check $? "CLOCKD_SHM picks the page"
CLOCKD_SHM=/elsewhere/page "$CLOCKCTL" --page "$nopage" --json status >"$tmp/out" 2>"$tmp/err"
rc=$?
jq -e --arg p "$nopage" '.page == $p' "$tmp/out" >/dev/null
check $? "--page overrides CLOCKD_SHM"

# wait gives up after its timeout, saying why.
run --page "$nopage" wait --timeout 0.2
[ "$rc" -eq 1 ] && [ ! -s "$tmp/out" ] && grep -q 'not ready after' "$tmp/err" &&
	grep -q 'No such file' "$tmp/err"
check $? "wait --timeout 0.2 without a page exits 1 and says why"

# Permission errors say what to do.
if [ "$(id -u)" -ne 0 ]; then
	mkdir "$tmp/locked" && : >"$tmp/locked/page" && chmod 000 "$tmp/locked/page"
	run --page "$tmp/locked/page" time
	[ "$rc" -eq 1 ] && grep -q 'join the group clockd, or run as root' "$tmp/err"
	check $? "an unreadable page: the error says to join the group clockd or run as root"
else
	skip "root reads any page: the permission message needs an unprivileged user"
fi

# --- the man page documents every verb of the table, and renders ---
man_page=$top_builddir/man/clockctl.1
# The tags of the .TP paragraphs in VERBS, fonts stripped, first word.
man_verbs=$(awk '/^\.SH/ { sec = $0 } sec ~ /VERBS/ && prev == ".TP" { print } { prev = $0 }' \
	"$man_page" | sed 's/\\f[BIRP]//g; s/^\.BR* //' | awk '{ print $1 }' | tr '\n' ' ')
missing=
for v in $(jq -r '.[].name' "$tmp/help.json"); do
	case " $man_verbs " in
	*" $v "*) ;;
	*) missing="$missing $v" ;;
	esac
done
[ -n "$man_verbs" ] && [ -z "$missing" ]
ok $? "clockctl(1) documents every verb of the table (missing:${missing:-none})"
missing=
for s in NAME SYNOPSIS DESCRIPTION OPTIONS VERBS "EXIT STATUS" ENVIRONMENT EXAMPLES "SEE ALSO"; do
	grep -q "^\\.SH \"*$s\"*\$" "$man_page" || missing="$missing [$s]"
done
[ -z "$missing" ]
ok $? "clockctl(1) has every section (missing:${missing:-none})"
if command -v groff >/dev/null 2>&1; then
	groff -man -Tutf8 -ww -z "$man_page" >"$tmp/groff.err" 2>&1
	[ ! -s "$tmp/groff.err" ]
	ok $? "clockctl(1) renders without groff warnings"
	[ -s "$tmp/groff.err" ] && diag "$(cat "$tmp/groff.err")"
else
	skip "groff is not installed"
fi

# --- a forged page (issue #16): a FIFO, an empty file, /dev/zero ---
# Each is refused at once (exit 1, the page's path named); watch on a FIFO
# too (opening a FIFO used to hang, and SIGTERM did not stop it): it exits
# 1 at its first read, or at the latest on SIGTERM.
mkfifo "$tmp/fifo" && : >"$tmp/empty"
for forged in "$tmp/fifo" "$tmp/empty" /dev/zero; do
	timeout 10 "$CLOCKCTL" --page "$forged" time >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ "$rc" -eq 1 ] && one_error_line && grep -qF "$forged" "$tmp/err"
	check $? "time on a forged page ($forged): exit 1, one line"
done
"$CLOCKCTL" --page "$tmp/fifo" watch -i 0.1 >"$tmp/out" 2>"$tmp/err" &
watcher=$!
sleep 0.5
kill -TERM "$watcher"
watch_gone() { ! kill -0 "$watcher" 2>/dev/null; }
poll "$DEADLINE_S" watch_gone
st=$?
[ $st -eq 0 ] || kill -KILL "$watcher"
wait "$watcher"
rc=$?
[ $st -eq 0 ] && [ "$rc" -eq 1 ] && grep -qF "$tmp/fifo" "$tmp/err"
check $? "watch on a FIFO page exits 1 naming the page, and does not hang (exit $rc)"

# --- extreme seconds on a page (issue #16): the ns counts saturate ---
"$top_builddir/tests/page/forged" extreme "$tmp/extreme" || bail "cannot write a page"
run --page "$tmp/extreme" --json watch -n 1
# (the JSON splits times into seconds and nanoseconds: INT64_MAX ns and
# INT64_MIN ns, floor seconds and a nanosecond part in [0, 1e9))
[ "$rc" -eq 0 ] && grep -q '"realtime_sec":9223372036,"realtime_nsec":854775807[,}]' "$tmp/out" &&
	grep -q '"monotonic_sec":-9223372037,"monotonic_nsec":145224192[,}]' "$tmp/out"
check $? "watch --json on a page with extreme seconds: realtime and monotonic ns saturate"
run --page "$tmp/extreme" watch -n 1
[ "$rc" -eq 0 ] && grep -q 'realtime 9223372036.854775807' "$tmp/out"
check $? "watch on a page with extreme seconds prints the saturated value"

finish
