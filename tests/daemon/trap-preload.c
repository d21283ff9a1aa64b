/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * LD_PRELOAD traps for the daemon tests (kmod's way of testing a daemon's
 * failure paths without hooks in the daemon):
 *
 *  - $CLOCKD_TEST_STALL names a file; while it exists, read() on a timerfd
 *    does not return, so the tick thread hangs in its tick device exactly
 *    as on a hung device (alarm.sh);
 *  - $CLOCKD_TEST_REALTIME_OFFSET names a file holding a number of ns; the
 *    process sees CLOCK_REALTIME (and CLOCK_REALTIME_COARSE) shifted by it,
 *    so writing the file steps the system time as far as the daemon can
 *    tell, without touching the machine's clock (wallstep.sh). The file
 *    is read at most every 10 ms, so a change takes effect within that.
 *    A second number, LEAP_AT (s), inserts a leap second there as the
 *    kernel does: once the shifted time reaches LEAP_AT, it is put back a
 *    second, so the second before LEAP_AT repeats at the very instant,
 *    however late the test gets to look (leap.sh);
 *  - $CLOCKD_TEST_ADJTIMEX names a file holding "STATUS TAI STATE"; while
 *    it exists, a read-only adjtimex() (modes 0) reports the kernel's own
 *    answer with the STA_INS/STA_DEL bits of STATUS, the TAI offset TAI and
 *    the return value STATE (TIME_OK 0, TIME_INS 1, TIME_DEL 2, TIME_OOP 3,
 *    TIME_WAIT 4): a leap second announced as far as the daemon can tell
 *    (leap.sh). Read at every call (the daemon asks once a second).
 *
 * Everything else goes straight to libc.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timex.h>
#include <time.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

EXPORT ssize_t read(int fd, void *buf, size_t count);
EXPORT int clock_gettime(clockid_t id, struct timespec *ts);
EXPORT int adjtimex(struct timex *tx);

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

/* The offset and leap instant in the file (0 if there is none), re-read
 * at most every 10 ms so that a read of CLOCK_REALTIME stays as fast as
 * the daemon expects (it brackets it between two reads of
 * CLOCK_MONOTONIC). */
static long long realtime_offset(int (*real_clock_gettime)(clockid_t, struct timespec *), long long *leap_at)
{
	static __thread long long cached, cached_leap, next_read;
	const char *path = getenv("CLOCKD_TEST_REALTIME_OFFSET");
	struct timespec now;
	long long off = 0, at = 0, t;
	FILE *f;

	real_clock_gettime(CLOCK_MONOTONIC, &now);
	t = (long long)now.tv_sec * 1000000000 + now.tv_nsec;
	if (t < next_read) {
		*leap_at = cached_leap;
		return cached;
	}
	next_read = t + 10000000;
	if (path && (f = fopen(path, "re"))) {
		switch (fscanf(f, "%lld %lld", &off, &at)) {
		case 2:
			break;
		case 1:
			at = 0;
			break;
		default:
			off = at = 0;
		}
		fclose(f);
	}
	*leap_at = cached_leap = at;
	return cached = off;
}

int clock_gettime(clockid_t id, struct timespec *ts)
{
	static int (*real_clock_gettime)(clockid_t, struct timespec *);
	long long ns, leap_at;
	int r;

	if (!real_clock_gettime)
		*(void **)&real_clock_gettime = dlsym(RTLD_NEXT, "clock_gettime");
	r = real_clock_gettime(id, ts);
	if (r != 0 || (id != CLOCK_REALTIME && id != CLOCK_REALTIME_COARSE))
		return r;
	ns = (long long)ts->tv_sec * 1000000000 + ts->tv_nsec + realtime_offset(real_clock_gettime, &leap_at);
	if (leap_at != 0 && ns >= leap_at * 1000000000)
		ns -= 1000000000;
	ts->tv_sec = (time_t)(ns / 1000000000);
	ts->tv_nsec = (long)(ns % 1000000000);
	if (ts->tv_nsec < 0) {
		ts->tv_nsec += 1000000000;
		ts->tv_sec--;
	}
	return 0;
}

int adjtimex(struct timex *tx)
{
	static int (*real_adjtimex)(struct timex *);
	const char *path = getenv("CLOCKD_TEST_ADJTIMEX");
	int status, tai, state, r;
	FILE *f;

	if (!real_adjtimex)
		*(void **)&real_adjtimex = dlsym(RTLD_NEXT, "adjtimex");
	r = real_adjtimex(tx);
	if (r < 0 || tx->modes != 0 || !path || !(f = fopen(path, "re")))
		return r;
	if (fscanf(f, "%d %d %d", &status, &tai, &state) == 3) {
		tx->status = (tx->status & ~(STA_INS | STA_DEL)) | (status & (STA_INS | STA_DEL));
		tx->tai = tai;
		r = state;
	}
	fclose(f);
	return r;
}
