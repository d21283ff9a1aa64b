# SPDX-License-Identifier: LGPL-2.1-or-later
# Sourced by run.sh and run-systemd.sh: the guest's serial console as TAP.
# tap reads the console on its standard input ($PREFIX marks the guest's
# own lines, wherever they start: systemd may print before them) and keeps
# a copy in $T/console.log. It numbers the guest's unnumbered TAP lines as
# they arrive; anything else behind the prefix is a comment. Every "not ok"
# fails the run. The plan comes last, with a failure added when the guest
# did not reach END or qemu (its status in $T/qemu.rc) did not exit cleanly.
tap() {
	n=0 fail=0 ended=no
	while IFS= read -r line; do
		line=${line%"$(printf '\r')"}
		echo "$line" >> "$T/console.log"
		case $line in *"$PREFIX "*) ;; *) continue ;; esac
		line=${line#*"$PREFIX "}
		case $line in
		"ok - "*) n=$((n + 1)); echo "ok $n ${line#ok }" ;;
		"not ok - "*) n=$((n + 1)); fail=1; echo "not ok $n ${line#not ok }" ;;
		END) ended=yes ;;
		"#"*) echo "$line" ;;
		*) echo "# $line" ;;
		esac
	done
	rc=$(cat "$T/qemu.rc" 2>/dev/null || echo lost)
	n=$((n + 1))
	if [ $ended = yes ] && [ "$rc" = 0 ]; then
		echo "ok $n - guest ran every check and powered off"
	else
		echo "not ok $n - guest ran every check and powered off (END: $ended, qemu status: $rc)"
		tail -n 30 "$T/console.log" | sed 's/^/# console: /'
		fail=1
	fi
	echo "1..$n"
	return $fail
}
