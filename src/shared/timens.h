/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The calling process's time namespace offsets (time_namespaces(7)): how
 * much its kernel CLOCK_MONOTONIC (and _RAW, _COARSE, as the kernel
 * offsets all three) and CLOCK_BOOTTIME (and _ALARM) read ahead of the
 * initial namespace's. clockd keeps its clocks and its timers in the
 * initial namespace's terms; a reader in another namespace adds its
 * offset to what it hands out and takes it off what it is handed.
 */
#ifndef CLOCKD_SHARED_TIMENS_H
#define CLOCKD_SHARED_TIMENS_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

struct timens_offsets {
	int64_t mono_ns;
	int64_t boot_ns;
};

/*
 * Read /proc/self/timens_offsets into @o: 0, or -errno with @o zeroed
 * (-ENOENT: a kernel without time namespaces, or no /proc: no offsets
 * the process could see either way; -EPROTO: a line it cannot parse).
 * Only open, read and close: callable in a fork child.
 */
int timens_read(struct timens_offsets *o);

/* The same from the @len bytes at @buf: lines "monotonic SEC NSEC" and
 * "boottime SEC NSEC" (or the clock's id for its name), any other line
 * -EPROTO. */
int timens_parse(const char *buf, size_t len, struct timens_offsets *o);

/* The offset @o gives kernel clock @id (0 for a clock no namespace moves). */
static inline int64_t timens_offset_of(const struct timens_offsets *o, clockid_t id)
{
	switch (id) {
	case CLOCK_MONOTONIC:
	case CLOCK_MONOTONIC_RAW:
	case CLOCK_MONOTONIC_COARSE:
		return o->mono_ns;
	case CLOCK_BOOTTIME:
	case CLOCK_BOOTTIME_ALARM:
		return o->boot_ns;
	default:
		return 0;
	}
}

#endif
