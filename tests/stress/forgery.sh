#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Forgery (issue #8, part 4). As root, a daemon on a page in a directory
# laid out like /run/clockd (root's, 0755); a non-root user ("nobody",
# through setpriv) then tries to write the page, to replace it, and to pass
# for someone else on the control socket. Before any daemon starts, a file
# or a symbolic link planted at the page path must be refused, not used or
# followed. (The NTP SHM export's permissions are tests/export/shm.sh's.)
set -u
. "$top_srcdir/tests/stress/lib.sh"
need_root_and_nobody "it runs a daemon as root and a client as nobody"

private_dir forgery
chmod 755 "$T"
D=$T/run
mkdir -m 755 "$D"
export CLOCKD_SHM=$D/page CLOCKD_SOCKET=$D/control

# start LOG: clockd on $D/page; 0 once live (10 s), else 1 (its pid in $pid)
start() {
	"$CLOCKD" -o page="$D/page" -o log_level=debug 2>"$1" &
	pid=$!
	i=0
	while [ $i -lt 100 ]; do
		"$CLOCKCTL" status >/dev/null 2>&1 && return 0
		kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}
stop() { kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; pid=; }

# refused WHAT LOG: the daemon exits with an error, without a live page
refused() {
	"$CLOCKD" -o page="$D/page" 2>"$2" &
	p=$!
	i=0
	while kill -0 "$p" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	if kill -0 "$p" 2>/dev/null; then
		kill -9 "$p"; wait "$p" 2>/dev/null
		return 1
	fi
	wait "$p"
	[ $? -ne 0 ]
}

# 1. Planted before the daemon starts.
echo "precious" >"$T/target"
ln -s "$T/target" "$D/page"
refused symlink "$T/log.symlink"
ok $? "a symbolic link at the page path: clockd refuses to start"
grep -q '^precious$' "$T/target" && [ "$(stat -c %s "$T/target")" -eq 9 ] && [ -L "$D/page" ]
ok $? "... and neither followed it (target unchanged) nor replaced it"
sed 's/^/# clockd: /' "$T/log.symlink" | tail -n 2
rm -f "$D/page"

head -c 4096 /dev/zero >"$D/page"
chown nobody "$D/page"
refused foreign "$T/log.foreign"
ok $? "a page file owned by another user: refused"
sed 's/^/# clockd: /' "$T/log.foreign" | tail -n 1
rm -f "$D/page"

head -c 4096 /dev/zero >"$D/page"
chmod 666 "$D/page"
refused writable "$T/log.writable"
ok $? "a world-writable page file: refused"
rm -f "$D/page"

head -c 4096 /dev/zero >"$T/other"
ln "$T/other" "$D/page"
refused hardlink "$T/log.hardlink"
ok $? "a page file with a second hard link: refused"
rm -f "$D/page" "$T/other"

# 2. A live daemon's page, attacked by nobody.
if ! start "$T/log.live"; then
	sed 's/^/# clockd: /' "$T/log.live"
	ok 1 "clockd starts on a clean page directory"
	finish
fi

as_nobody sh -c 'printf x | dd of="$CLOCKD_SHM" bs=1 seek=300 conv=notrunc' 2>/dev/null
st=$?
[ $st -ne 0 ]
ok $? "nobody cannot open the page for writing (status $st)"
as_nobody sh -c 'echo x >"$CLOCKD_SHM.new" || ln -sf /tmp/x "$CLOCKD_SHM.new" || mv -f /tmp "$CLOCKD_SHM"' 2>/dev/null
st=$?
[ $st -ne 0 ] && [ ! -e "$CLOCKD_SHM.new" ] && [ -f "$D/page" ] && ! [ -L "$D/page" ]
ok $? "nobody cannot create, link or rename anything at the page's directory (status $st)"
as_nobody "$CLOCKCTL" status >/dev/null 2>&1
ok $? "nobody still reads the page (clockctl status)"

# 3. The control socket: credentials come from the kernel (SO_PEERCRED).
# The socket is the daemon's 0660; opened to all for this test, a client
# run as nobody is seen as uid $NOBODY_UID, whatever it claims.
as_nobody "$CLOCKCTL" timers >/dev/null 2>&1
st=$?
[ $st -ne 0 ]
ok $? "nobody cannot use the control socket as the daemon made it (status $st)"
chmod 666 "$D/control"
as_nobody "$CLOCKCTL" timers >/dev/null 2>&1
i=0
while ! grep -q "control: connection from pid [0-9]* uid $NOBODY_UID gid $NOBODY_GID" "$T/log.live" && [ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
grep -q "control: connection from pid [0-9]* uid $NOBODY_UID gid $NOBODY_GID" "$T/log.live"
ok $? "a client run as nobody is seen by the daemon as uid $NOBODY_UID gid $NOBODY_GID"
grep "uid $NOBODY_UID" "$T/log.live" | head -n 1 | sed 's/^/# clockd: /'
stop
finish
