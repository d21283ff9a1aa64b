#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# make install into a DESTDIR puts every file in its place (programs,
# library, the preload library in $libdir/clockd, examples, headers,
# pkg-config file, systemd units, sysusers.d and
# tmpfiles.d files, the default configuration, man pages, bash
# completion); a second install keeps an edited configuration; the
# installed units pass `systemd-analyze verify` with no message and
# clockd.service's `systemd-analyze security --offline=true` exposure is at
# most 2.5; systemd-sysusers and systemd-tmpfiles accept the installed
# files (in a scratch root); the completion completes verbs; "man F"
# works for every library function F; make uninstall removes all but the
# edited configuration; nothing is installed outside the prefix but in a
# directory given to configure.
. "$top_srcdir/tests/service/lib.sh"

dest=$tmp/dest
# The install directories as this build's Makefile expands them.
mk() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$top_builddir" "$@"; }
dirs=$(printf 'print-dirs:\n\t@echo "prefix=$(prefix) sbindir=$(sbindir) bindir=$(bindir) libdir=$(libdir) pkglibdir=$(pkglibdir) docdir=$(docdir) includedir=$(includedir) sysconfdir=$(sysconfdir) mandir=$(mandir) unitdir=$(systemdsystemunitdir) sysusersdir=$(sysusersdir) tmpfilesdir=$(tmpfilesdir) bashcompletiondir=$(bashcompletiondir)"\n' |
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$top_builddir" -f Makefile -f - print-dirs) ||
	bail "cannot read the install directories from $top_builddir/Makefile"
eval "$dirs"

mk install DESTDIR="$dest" >"$tmp/install.log" 2>&1
rc=$?
ok $rc "make install DESTDIR=... (exit $rc)"
[ $rc -eq 0 ] || { diag_file "$tmp/install.log"; finish; }

missing=
for f in "$sbindir/clockd" "$bindir/clockctl" "$libdir/libclockd.so" \
	"$includedir/clockd/clockd.h" "$includedir/clockd/page.h" "$libdir/pkgconfig/libclockd.pc" \
	"$unitdir/clockd.service" "$unitdir/clockd.socket" "$unitdir/clockd-wait.service" \
	"$sysusersdir/clockd.conf" "$tmpfilesdir/clockd.conf" "$sysconfdir/clockd.conf" \
	"$mandir/man8/clockd.8" "$mandir/man5/clockd.conf.5" "$mandir/man1/clockctl.1" \
	"$mandir/man3/libclockd.3" "$bashcompletiondir/clockctl" \
	"$pkglibdir/libclockd-preload.so" "$docdir/examples/libevent-timers.c"; do
	[ -e "$dest$f" ] || missing="$missing $f"
done
[ -z "$missing" ]
ok $? "every file is in place (missing:${missing:- none})"
# Nothing lands outside the prefix but in a directory configure was given
# (--sysconfdir=, --with-systemdsystemunitdir=, ...: config.status says).
given=" $("$top_builddir/config.status" --config) "
outside=$(cd "$dest" && find . ! -type d | sed 's|^\.||' | while read -r f; do
	case $f in "$prefix"/*) continue ;; esac
	for d in --sysconfdir:"$sysconfdir" --with-systemdsystemunitdir:"$unitdir" \
		--with-sysusersdir:"$sysusersdir" --with-tmpfilesdir:"$tmpfilesdir" \
		--with-bashcompletiondir:"$bashcompletiondir"; do
		case $given in *[\ \']"${d%%:*}"[=\'\ ]*)
			case $f in "${d#*:}"/*) continue 2 ;; esac ;;
		esac
	done
	echo "$f"
done)
[ -z "$outside" ]
ok $? "every installed file is under the prefix $prefix, or in a directory given to configure (outside: $(echo ${outside:-none}))"
# The preload library is no library to link with: not in the public libdir.
[ ! -e "$dest$libdir/libclockd-preload.so" ] && [ "$pkglibdir" = "$libdir/clockd" ]
ok $? "libclockd-preload.so is in $pkglibdir, not in $libdir"
# "man FUNCTION" for every function a section-3 page names (man/names.sh):
# its page is a ".so" line that brings up its group's page.
(cd "$top_builddir" && sh "$top_srcdir/man/names.sh" -l man/*.3) >"$tmp/man-links"
if [ ! -s "$tmp/man-links" ]; then
	ok 1 "man/names.sh lists the functions of the section-3 pages"
elif command -v man >/dev/null 2>&1; then
	bad=
	while read -r name page; do
		title=$(echo "${page%.3}" | tr a-z A-Z)
		MANWIDTH=80 man -M "$dest$mandir" -P cat 3 "$name" 2>/dev/null | head -n 1 |
			grep -q "^$title(3)" || bad="$bad $name"
	done <"$tmp/man-links"
	[ -z "$bad" ]
	ok $? "man FUNCTION shows its group's page for $(wc -l <"$tmp/man-links") functions (not:${bad:- none})"
else
	skip "man is not installed"
fi
grep -qx "ExecStart=$sbindir/clockd -o user=clockd -o group=clockd" "$dest$unitdir/clockd.service"
ok $? "clockd.service starts the installed daemon ($sbindir/clockd)"
! grep -q '@[a-z_]*@' "$dest$unitdir/clockd.service"
ok $? "clockd.service has no unsubstituted @variable@"
grep -qx "ExecStart=$bindir/clockctl wait --timeout 180" "$dest$unitdir/clockd-wait.service" &&
	! grep -q '@[a-z_]*@' "$dest$unitdir/clockd-wait.service"
ok $? "clockd-wait.service runs the installed clockctl wait ($bindir/clockctl)"

echo '# edited by the administrator' >>"$dest$sysconfdir/clockd.conf"
mk install DESTDIR="$dest" >"$tmp/install2.log" 2>&1 &&
	grep -q '^# edited by the administrator$' "$dest$sysconfdir/clockd.conf"
ok $? "a second install keeps an edited $sysconfdir/clockd.conf"

# --- systemd-analyze ---------------------------------------------------------
# The units as installed, but for ExecStart= naming the daemon under the
# DESTDIR (verify checks that it is executable); man pages from the DESTDIR.
mkdir -p "$tmp/units"
for u in clockd.service clockd.socket clockd-wait.service; do
	sed -e "s|^ExecStart=$sbindir/|ExecStart=$dest$sbindir/|" \
		-e "s|^ExecStart=$bindir/|ExecStart=$dest$bindir/|" "$dest$unitdir/$u" >"$tmp/units/$u"
done
if command -v systemd-analyze >/dev/null 2>&1; then
	MANPATH=$dest$mandir systemd-analyze verify "$tmp/units/clockd.service" "$tmp/units/clockd.socket" \
		"$tmp/units/clockd-wait.service" \
		>"$tmp/verify" 2>&1
	rc=$?
	[ $rc -eq 0 ] && [ ! -s "$tmp/verify" ]
	ok $? "systemd-analyze verify: clean on the installed units (exit $rc)"
	diag_file "$tmp/verify"
	if systemd-analyze security --help 2>&1 | grep -q -e '--offline'; then
		systemd-analyze security --offline=true "$tmp/units/clockd.service" >"$tmp/security" 2>&1
		level=$(sed -n 's/.*Overall exposure level for clockd.service: \([0-9.]*\).*/\1/p' "$tmp/security")
		[ -n "$level" ] && awk -v l="$level" 'BEGIN { exit !(l <= 2.5) }'
		ok $? "systemd-analyze security --offline=true: exposure ${level:-?} (at most 2.5)"
		grep '✗' "$tmp/security" | diag_file
	else
		skip "this systemd-analyze has no security --offline"
	fi
else
	skip "systemd-analyze is not installed (Debian: package systemd)"
	skip "systemd-analyze is not installed (Debian: package systemd)"
fi

# --- sysusers.d and tmpfiles.d, applied to a scratch root ---------------------
root=$tmp/sysroot
mkdir -p "$root/etc" "$root/run"
if command -v systemd-sysusers >/dev/null 2>&1; then
	systemd-sysusers --root="$root" "$dest$sysusersdir/clockd.conf" >"$tmp/sysusers" 2>&1 &&
		grep -q '^clockd:' "$root/etc/passwd" && grep -q '^clockd:' "$root/etc/group"
	ok $? "systemd-sysusers creates the user and group clockd from the installed file"
	diag_file "$tmp/sysusers"
else
	skip "systemd-sysusers is not installed"
fi
if command -v systemd-tmpfiles >/dev/null 2>&1; then
	# Only root may give the directory to root: a user applies the file
	# with the owner fields as "-" (the caller), and the owner is checked
	# as root only.
	tmpfiles=$dest$tmpfilesdir/clockd.conf
	want="directory 755 root root"
	if [ "$(id -u)" -ne 0 ]; then
		awk '/^[^#]/ && NF >= 5 { $4 = "-"; $5 = "-" } { print }' "$tmpfiles" >"$tmp/tmpfiles.conf"
		tmpfiles=$tmp/tmpfiles.conf
		want="directory 755 $(id -un) $(id -gn)"
	fi
	systemd-tmpfiles --root="$root" --create "$tmpfiles" >"$tmp/tmpfiles" 2>&1 &&
		[ "$(stat -c '%F %a %U %G' "$root/run/clockd")" = "$want" ]
	ok $? "systemd-tmpfiles creates /run/clockd ($want) from the installed file"
	diag_file "$tmp/tmpfiles"
else
	skip "systemd-tmpfiles is not installed"
fi

# --- bash completion ------------------------------------------------------------
if command -v bash >/dev/null 2>&1; then
	got=$(PATH="$dest$bindir:$PATH" LD_LIBRARY_PATH="$dest$libdir" bash -c '
		. "$1"
		COMP_WORDS=(clockctl rel); COMP_CWORD=1; _clockctl; echo "${COMPREPLY[*]}"
		COMP_WORDS=(clockctl watch --i); COMP_CWORD=2; _clockctl; echo "${COMPREPLY[*]}"' \
		sh "$dest$bashcompletiondir/clockctl" 2>&1)
	[ "$got" = "reload
--interval" ]
	ok $? "the completion completes verbs and a verb's options: $(echo "$got" | tr '\n' ' ')"
else
	skip "bash is not installed"
fi

# --- uninstall ------------------------------------------------------------------
mk uninstall DESTDIR="$dest" >"$tmp/uninstall.log" 2>&1
left=$(cd "$dest" && find . -type f | sort)
[ "$left" = ".$sysconfdir/clockd.conf" ]
ok $? "make uninstall removes all but the edited configuration (left: $(echo $left))"

finish
