#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# valgrind memcheck (issue #8, part 5) of clockctl (status, time, sources,
# jiffies, timers) and of a small timer client built here, each against a
# live daemon: no invalid access, no use of uninitialised memory, no leak
# ("definitely lost"), else valgrind's exit status 99 fails the check.
set -u
. "$top_srcdir/tests/stress/lib.sh"
# valgrind runs the program, not libtool's wrapper script.
[ -x "$top_builddir/src/clockctl/.libs/clockctl" ] && CLOCKCTL=$top_builddir/src/clockctl/.libs/clockctl
LIBDIR=$top_builddir/src/libclockd/.libs

if ! command -v valgrind >/dev/null 2>&1; then
	echo "1..0 # SKIP valgrind is not installed"
	exit 0
fi
# A sanitizer build (CI's second pass) cannot run under valgrind; the plain
# build of the same suite runs this test.
if grep -q '^CFLAGS = .*-fsanitize=' "$top_builddir/Makefile"; then
	echo "1..0 # SKIP this build is instrumented with a sanitizer, which valgrind cannot run (the plain build runs this test)"
	exit 0
fi
private_dir valgrind
export LD_LIBRARY_PATH=$LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

"$CLOCKD" -o page="$T/page" 2>"$T/log" &
pid=$!
if ! serving; then
	ok 1 "clockd starts"
	finish
fi

vg() { # vg NAME COMMAND...: memcheck, errors are exit status 99
	name=$1
	shift
	valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
		--log-file="$T/vg.$name" "$@" >"$T/out.$name" 2>&1
	st=$?
	sed 's/^/# /' "$T/vg.$name" | head -n 30
	return $st
}

for verb in status time sources jiffies timers; do
	vg "$verb" "$CLOCKCTL" "$verb"
	ok $? "valgrind: clockctl $verb"
done

cat >"$T/client.c" <<'EOC'
#include <clockd/clockd.h>
#include <stdio.h>
#include <time.h>
static volatile int fired;
static void fn(struct clockd_timer *t, void *arg) { (void)t; (void)arg; fired++; }
int main(void)
{
	struct clockd_timer t[8];
	struct timespec ts = { 0, 1000000 };
	for (int i = 0; i < 8; i++) {
		clockd_timer_setup(&t[i], fn, NULL);
		if (clockd_add_timer(&t[i], clockd_get_jiffies_64() + 2 + i) != 0)
			return 1;
	}
	/* Under valgrind the arms can take longer than t[7]'s 9 jiffies:
	 * then it fired before it was deleted (0, not pending), as in the
	 * kernel, and all 8 run. */
	int want = clockd_del_timer_sync(&t[7]) == 1 ? 7 : 8;
	for (int i = 0; i < 2000 && fired < want; i++)
		nanosleep(&ts, NULL);
	for (int i = 0; i < 8; i++)
		clockd_del_timer_sync(&t[i]);
	printf("fired %d of %d\n", fired, want);
	return fired == want ? 0 : 2;
}
EOC
if ${CC:-cc} -I"$top_srcdir/include" -o "$T/client" "$T/client.c" -L"$LIBDIR" -lclockd -lpthread 2>"$T/cc.log"; then
	vg client "$T/client"
	st=$?
	sed 's/^/# /' "$T/out.client"
	ok $st "valgrind: a client arming 8 jiffies timers, deleting one, waiting for the rest"
else
	sed 's/^/# /' "$T/cc.log"
	ok 1 "the timer client builds"
fi
finish
