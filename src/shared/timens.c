/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include "shared/timens.h"

#define NSEC_PER_SEC_ 1000000000LL

/* A decimal integer at *@p (optional sign), skipping blanks first. */
static bool parse_int(const char **p, const char *end, int64_t *v)
{
	const char *s = *p;
	bool neg = false, any = false;
	int64_t n = 0;

	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	if (s < end && (*s == '-' || *s == '+'))
		neg = *s++ == '-';
	while (s < end && *s >= '0' && *s <= '9') {
		if (n > (INT64_MAX - 9) / 10)
			return false;
		n = n * 10 + (*s++ - '0');
		any = true;
	}
	*p = s;
	*v = neg ? -n : n;
	return any;
}

static bool blank(const char *s, const char *end)
{
	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	return s == end;
}

/* One line "monotonic <sec> <nsec>" (the kernel names the clock; a number
 * is its clock id, as the file accepts on writes). */
static int parse_line(const char *s, const char *end, struct timens_offsets *o)
{
	int64_t *dst = NULL, id, sec, nsec;
	const char *p = s;

	if (end - s >= 9 && memcmp(s, "monotonic", 9) == 0) {
		dst = &o->mono_ns;
		p = s + 9;
	} else if (end - s >= 8 && memcmp(s, "boottime", 8) == 0) {
		dst = &o->boot_ns;
		p = s + 8;
	} else if (parse_int(&p, end, &id)) {
		dst = id == CLOCK_MONOTONIC ? &o->mono_ns : id == CLOCK_BOOTTIME ? &o->boot_ns : NULL;
	}
	if (!dst || !parse_int(&p, end, &sec) || !parse_int(&p, end, &nsec) || !blank(p, end) || nsec < 0 ||
	    nsec >= NSEC_PER_SEC_ || sec > INT64_MAX / NSEC_PER_SEC_ - 1 || sec < INT64_MIN / NSEC_PER_SEC_ + 1)
		return -EPROTO;
	*dst = sec * NSEC_PER_SEC_ + nsec;
	return 0;
}

int timens_parse(const char *buf, size_t len, struct timens_offsets *o)
{
	int err = 0;

	o->mono_ns = o->boot_ns = 0;
	for (const char *s = buf, *end = buf + len; !err && s < end;) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));

		if (!nl)
			nl = end;
		if (nl > s)
			err = parse_line(s, nl, o);
		s = nl + 1;
	}
	if (err)
		o->mono_ns = o->boot_ns = 0;
	return err;
}

int timens_read(struct timens_offsets *o)
{
	char buf[256];
	ssize_t n, len = 0;
	int fd, err = 0;

	o->mono_ns = o->boot_ns = 0;
	fd = open("/proc/self/timens_offsets", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (len < (ssize_t)sizeof(buf) && (n = read(fd, buf + len, sizeof(buf) - (size_t)len)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			break;
		}
		len += n;
	}
	close(fd);
	/* Two short lines; a file that fills the buffer is not the kernel's. */
	if (!err && len == (ssize_t)sizeof(buf))
		err = -EPROTO;
	return err ? err : timens_parse(buf, (size_t)len, o);
}
