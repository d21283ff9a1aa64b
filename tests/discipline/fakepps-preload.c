/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * LD_PRELOAD: a kernel PPS device for the daemon without one. Opening the
 * path $CLOCKD_TEST_PPS gives a descriptor (of /dev/null) on which the
 * RFC 2783 ioctls of <linux/pps.h> answer as a kernel PPS source whose
 * assert edge falls on every whole second of CLOCK_REALTIME, plus
 * $CLOCKD_TEST_PPS_OFFSET_NS (0 if unset): PPS_GETCAP (assert and clear,
 * can wait), PPS_GETPARAMS and PPS_SETPARAMS (the mode kept), and
 * PPS_FETCH, which waits for the next edge within its timeout (EINTR on a
 * signal, ETIMEDOUT past it) and returns its time stamp and sequence.
 * While the file "$CLOCKD_TEST_PPS.stop" exists no edge comes (a cable
 * pulled). Everything else goes straight to libc.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include <linux/pps.h>

#define EXPORT __attribute__((visibility("default")))
#define NS 1000000000LL

EXPORT int open(const char *path, int flags, ...);
EXPORT int open64(const char *path, int flags, ...);
EXPORT int __open_2(const char *path, int flags);
EXPORT int __open64_2(const char *path, int flags);
EXPORT int ioctl(int fd, unsigned long req, ...);

static int pps_fd = -1;
static int pps_mode = PPS_CAPTUREASSERT | PPS_TSFMT_TSPEC;
static uint32_t pps_seq;
static int64_t pps_last; /* realtime of the last edge returned */

static int fake_open(const char *path, int flags, mode_t mode, const char *sym)
{
	int (*real)(const char *, int, ...) = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, sym);
	const char *want = getenv("CLOCKD_TEST_PPS");

	if (want && strcmp(path, want) == 0) {
		int fd = real("/dev/null", O_RDWR | (flags & O_CLOEXEC));

		if (fd >= 0)
			pps_fd = fd;
		return fd;
	}
	return real(path, flags, mode);
}

static mode_t mode_arg(int flags, va_list ap)
{
	return (flags & (O_CREAT | O_TMPFILE)) ? (mode_t)va_arg(ap, int) : 0;
}

int open(const char *path, int flags, ...)
{
	va_list ap;
	mode_t m;

	va_start(ap, flags);
	m = mode_arg(flags, ap);
	va_end(ap);
	return fake_open(path, flags, m, "open");
}

int open64(const char *path, int flags, ...)
{
	va_list ap;
	mode_t m;

	va_start(ap, flags);
	m = mode_arg(flags, ap);
	va_end(ap);
	return fake_open(path, flags, m, "open64");
}

int __open_2(const char *path, int flags)
{
	return fake_open(path, flags, 0, "open");
}

int __open64_2(const char *path, int flags)
{
	return fake_open(path, flags, 0, "open64");
}

static int64_t now_real(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec * NS + ts.tv_nsec;
}

static int stopped(void)
{
	char path[512];

	snprintf(path, sizeof(path), "%s.stop", getenv("CLOCKD_TEST_PPS"));
	return access(path, F_OK) == 0;
}

/* Wait for the next edge after the last one returned. */
static int fetch(struct pps_fdata *fd)
{
	const char *o = getenv("CLOCKD_TEST_PPS_OFFSET_NS");
	int64_t off = o ? strtoll(o, NULL, 10) : 0, now = now_real();
	int64_t timeout = fd->timeout.sec * NS + fd->timeout.nsec, end = now + timeout;
	int64_t edge = ((now - off) / NS + 1) * NS + off;
	struct timespec ts;

	if (edge <= pps_last)
		edge = pps_last + NS;
	if (edge > end || stopped()) {
		ts.tv_sec = (time_t)(end / NS);
		ts.tv_nsec = (long)(end % NS);
		if (clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &ts, NULL) == EINTR) {
			errno = EINTR;
			return -1;
		}
		errno = ETIMEDOUT;
		return -1;
	}
	ts.tv_sec = (time_t)(edge / NS);
	ts.tv_nsec = (long)(edge % NS);
	if (clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &ts, NULL) == EINTR) {
		errno = EINTR;
		return -1;
	}
	pps_last = edge;
	memset(&fd->info, 0, sizeof(fd->info));
	fd->info.assert_sequence = ++pps_seq;
	fd->info.assert_tu.sec = edge / NS;
	fd->info.assert_tu.nsec = (int32_t)(edge % NS);
	fd->info.current_mode = pps_mode;
	return 0;
}

int ioctl(int fd, unsigned long req, ...)
{
	int (*real)(int, unsigned long, ...) = (int (*)(int, unsigned long, ...))dlsym(RTLD_NEXT, "ioctl");
	va_list ap;
	void *arg;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (fd != pps_fd || pps_fd < 0)
		return real(fd, req, arg);
	switch (req) {
	case PPS_GETCAP:
		*(int *)arg = PPS_CAPTUREBOTH | PPS_CANWAIT | PPS_TSFMT_TSPEC;
		return 0;
	case PPS_GETPARAMS:
		memset(arg, 0, sizeof(struct pps_kparams));
		((struct pps_kparams *)arg)->api_version = PPS_API_VERS;
		((struct pps_kparams *)arg)->mode = pps_mode;
		return 0;
	case PPS_SETPARAMS:
		pps_mode = ((struct pps_kparams *)arg)->mode;
		return 0;
	case PPS_FETCH:
		return fetch(arg);
	default:
		errno = ENOTTY;
		return -1;
	}
}
