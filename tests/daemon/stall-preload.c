/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * An LD_PRELOAD trap for alarm.sh (kmod's way of testing a daemon's failure
 * paths without hooks in it): while the file named by $CLOCKD_TEST_STALL
 * exists, read() on a timerfd does not return, so the daemon's tick thread
 * hangs in its tick device exactly as it would on a hung device. Every
 * other read() goes straight to libc.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

__attribute__((visibility("default"))) ssize_t read(int fd, void *buf, size_t count);

static int is_timerfd(int fd)
{
	char link[64], target[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, target, sizeof(target) - 1);
	if (n < 0)
		return 0;
	target[n] = '\0';
	return strcmp(target, "anon_inode:[timerfd]") == 0;
}

ssize_t read(int fd, void *buf, size_t count)
{
	static ssize_t (*real_read)(int, void *, size_t);
	const char *trigger = getenv("CLOCKD_TEST_STALL");
	struct timespec nap = { 0, 1000000 };

	if (!real_read)
		*(void **)&real_read = dlsym(RTLD_NEXT, "read");
	if (trigger && is_timerfd(fd))
		while (access(trigger, F_OK) == 0)
			nanosleep(&nap, NULL);
	return real_read(fd, buf, count);
}
