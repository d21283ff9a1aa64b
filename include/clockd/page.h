/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The clockd time page: the shared-memory ABI between the daemon (the only
 * writer) and every client (readers, mapping it read-only).
 *
 * Rules this layout keeps, because a 32-bit client and a 64-bit daemon must
 * agree byte for byte:
 *  - fixed-width fields only (no time_t, long, int, pointers, volatile);
 *  - every 8-byte field sits at a multiple of 8 with explicit padding, so the
 *    i386 ABI (4-byte alignment of 64-bit members) gives the same offsets;
 *  - every offset and the size are checked at compile time below (in C and C++);
 *  - the file is CLOCKD_PAGE_SIZE bytes, created once and never shrunk.
 *
 * Most programs should not read this directly: use <clockd/clockd.h>.
 *
 * Consistency: the time data is kept twice (data[0], data[1]) under one
 * sequence count, the kernel's "latch" (include/linux/seqlock.h,
 * raw_write_seqcount_latch). The writer bumps seq, rewrites the copy readers
 * are no longer directed to, bumps seq again, rewrites the other. A reader
 * (clockd_page_read_begin() below):
 *
 *     do {
 *         s = load_acquire(&page->seq);
 *         d = &page->data[s & 1];
 *         ... relaxed loads of *d ...
 *         atomic_thread_fence(acquire);
 *     } while (load_relaxed(&page->seq) != s);
 *
 * Readers never wait for the writer, and a writer killed at any point leaves
 * the copy that seq designates complete.
 *
 * Alarm: the daemon sets alarm (CLOCKD_ALARM_*) when it knows the page is
 * not being kept (no update for extrapolate_ns, its source failed) and
 * clears it when it recovers; readers then fail with ESTALE.
 *
 * Writer liveness: writer_lock holds a robust, process-shared futex word
 * owned by the daemon for its whole life (the kernel's robust-futex ABI,
 * Documentation/locking/robust-futex-ABI.rst). Its low 30 bits are the
 * owner's thread id; when the daemon dies, however it dies, the kernel sets
 * bit 30 (CLOCKD_PAGE_OWNER_DIED). Readers load the first 32-bit word only.
 */
#ifndef CLOCKD_PAGE_H
#define CLOCKD_PAGE_H

#include <stddef.h>
#include <stdint.h>

#define CLOCKD_PAGE_MAGIC 0x4b4c4343u /* "CCLK" in little-endian memory */
#define CLOCKD_PAGE_ABI 1u
#define CLOCKD_PAGE_SIZE 4096u

/* page->flags (whole word read and written atomically) */
#define CLOCKD_PAGE_RUNNING (1u << 0)  /* a daemon owns the page and ticks */
#define CLOCKD_PAGE_SYNCED (1u << 1)   /* disciplined to a reference */
#define CLOCKD_PAGE_FAULT (1u << 2)    /* the daemon's source reports a fault */
#define CLOCKD_PAGE_STOPPING (1u << 3) /* the daemon is shutting down cleanly */

/* page->alarm bits */
#define CLOCKD_ALARM_TICK_STOPPED (1u << 0) /* no update for extrapolate_ns */
#define CLOCKD_ALARM_SOURCE (1u << 1)       /* the clocksource failed */

/* writer_lock word */
#define CLOCKD_PAGE_OWNER_TID_MASK 0x3fffffffu
#define CLOCKD_PAGE_OWNER_DIED 0x40000000u

/* data.vclock_mode: how a client may read the counter itself */
#define CLOCKD_VCLOCK_NONE 0u  /* it cannot: tick resolution only */
#define CLOCKD_VCLOCK_TSC 1u   /* x86 TSC, read as lfence; rdtsc */
#define CLOCKD_VCLOCK_POSIX 2u /* clock_gettime(vclock_clockid) in ns */
#define CLOCKD_VCLOCK_HPET 3u  /* the HPET main counter: mmap vclock_path, */
			       /* 64-bit little-endian at byte 0xf0 */
#define CLOCKD_VCLOCK_PHC 4u   /* a PTP clock: open vclock_path read-only, */
			       /* clock_gettime(FD_TO_CLOCKID(fd)) in ns */

/* data.disc_state: the discipline (clockd.conf: reference) */
#define CLOCKD_DISC_NONE 0u      /* no reference configured: free-running */
#define CLOCKD_DISC_UNLOCKED 1u  /* no usable reference events yet */
#define CLOCKD_DISC_ACQUIRING 2u /* measuring the rate, converging */
#define CLOCKD_DISC_LOCKED 3u    /* following the reference (page flag SYNCED) */
#define CLOCKD_DISC_HOLDOVER 4u  /* reference lost after a lock: the rate is kept */

/*
 * data.leap and data.tai_offset: the kernel's leap second state (adjtimex:
 * STA_INS, STA_DEL, the TAI offset), followed by the daemon about once a
 * second and kept in step with CLOCKD_REALTIME: in the same copy of the
 * data as the realtime base, so that realtime + tai_offset (CLOCKD_TAI)
 * never steps at a leap. Both words were padding (zero) in pages of older
 * daemons: without CLOCKD_LEAP_KNOWN neither is known (a client then has
 * no TAI, not TAI = UTC). The low two bits are NTP's leap indicator.
 */
#define CLOCKD_LEAP_NONE 0u        /* no leap second announced */
#define CLOCKD_LEAP_INSERT 1u      /* the last minute of this UTC day has 61 s */
#define CLOCKD_LEAP_DELETE 2u      /* ... has 59 s */
#define CLOCKD_LEAP_MASK 3u
#define CLOCKD_LEAP_KNOWN (1u << 8) /* the daemon follows the kernel's state */

/*
 * The device table (page->devices): every clocksource, tick device and
 * reference the configuration names, in order of preference, with its state. Written by
 * the daemon when a state changes, under its own sequence count (dev_seq:
 * odd while an entry is being written; a reader copies the table and
 * retries while dev_seq is odd or changed). Informative: the clocks do not
 * depend on it.
 */
#define CLOCKD_PAGE_MAX_DEVICES 10
/* clockd_page_device.role */
#define CLOCKD_DEV_SOURCE 1u
#define CLOCKD_DEV_TICK 2u
#define CLOCKD_DEV_REFERENCE 3u
/* clockd_page_device.state */
#define CLOCKD_DEV_STANDBY 0u     /* configured, not in use (a fallback) */
#define CLOCKD_DEV_ACTIVE 1u      /* in use */
#define CLOCKD_DEV_FAULT 2u       /* was in use, failed (see fault) */
#define CLOCKD_DEV_UNAVAILABLE 3u /* could not be opened (see fault) */
/* clockd_page_device.fault: the last fault seen */
#define CLOCKD_FAULT_NONE 0u
#define CLOCKD_FAULT_OPEN 1u      /* open or set-up failed */
#define CLOCKD_FAULT_STALLED 2u   /* no tick, or no counter progress, in stall_ticks periods */
#define CLOCKD_FAULT_BACKWARDS 3u /* the counter went backwards */
#define CLOCKD_FAULT_STEPPED 4u   /* the counter jumped against the kernel's clock */
#define CLOCKD_FAULT_GONE 5u      /* the device disappeared */
#define CLOCKD_FAULT_ERROR 6u     /* repeated device errors */

struct clockd_page_device {
	char name[16];    /* driver name, NUL-terminated */
	char device[48];  /* device path or detail, NUL-terminated */
	uint32_t role;    /* CLOCKD_DEV_SOURCE or CLOCKD_DEV_TICK */
	uint32_t state;   /* CLOCKD_DEV_* */
	uint32_t fault;   /* CLOCKD_FAULT_*: the last one */
	uint32_t pad0;
	int64_t since_ns; /* kernel CLOCK_MONOTONIC of the last state change */
	uint64_t faults;  /* fault events */
	uint64_t spurious; /* tick devices: pulses rejected as too early */
	uint64_t missed;   /* tick devices: pulses late by more than half a period */
	uint64_t reserved[2];
};

/*
 * One copy of the time data: 192 bytes, three cache lines. The first line
 * holds everything the fine CLOCKD_MONOTONIC read needs; the second the
 * coarse clocks and jiffies.
 *
 * Time at counter value c, for a clock with base (sec, snsec):
 *     ns = snsec + ((c - cycle_last) & mask) * mult;   (units: ns << shift)
 *     time = sec + (ns >> shift) / 1e9 s, (ns >> shift) % 1e9 ns
 * valid while ((c - cycle_last) & mask) <= max_cycles, the extrapolation
 * bound (header extrapolate_ns, in counter cycles): a reader extrapolates
 * that far past the last update, as the vDSO does, whether or not the
 * daemon is late; beyond it the page is stale (and the product could
 * overflow). CLOCKD_MONOTONIC_RAW uses raw_mult,
 * which discipline never changes.
 */
struct clockd_page_data {
	uint32_t vclock_mode;
	int32_t vclock_clockid; /* kernel clock id, CLOCKD_VCLOCK_POSIX only */
	uint64_t cycle_last;    /* counter value of the last update */
	uint64_t mask;          /* counter width mask */
	uint64_t max_cycles;    /* freshness and overflow bound of a delta */
	uint32_t mult;
	uint32_t shift;
	int64_t mono_sec; /* CLOCKD_MONOTONIC at cycle_last */
	uint64_t mono_snsec;
	int64_t real_sec; /* CLOCKD_REALTIME at cycle_last */
	/* line 2 */
	uint64_t real_snsec;
	int64_t raw_sec; /* CLOCKD_MONOTONIC_RAW at cycle_last */
	uint64_t raw_snsec;
	uint32_t raw_mult;
	uint32_t xtime_nsec;
	int64_t xtime_sec; /* xtime: CLOCKD_REALTIME_COARSE */
	int64_t coarse_mono_sec; /* CLOCKD_MONOTONIC_COARSE */
	uint32_t coarse_mono_nsec;
	uint32_t leap;           /* CLOCKD_LEAP_*: the kernel's leap state */
	uint64_t jiffies_64;
	/* line 3 */
	uint64_t kernel_mono_ns; /* kernel CLOCK_MONOTONIC when written */
	int64_t offset_ns;       /* last offset to the reference (discipline) */
	int64_t freq_ppb;        /* applied frequency correction, ppb */
	uint64_t error_bound_ns; /* estimated maximum error, 0 = unknown */
	int64_t rms_offset_ns;   /* RMS of recent offsets to the reference */
	int64_t skew_ppb;        /* estimated error of freq_ppb */
	int64_t ref_mono_ns;     /* kernel CLOCK_MONOTONIC of the last reference event, 0: none */
	uint32_t disc_state;     /* CLOCKD_DISC_* */
	int32_t tai_offset;      /* TAI - UTC, s (leap & CLOCKD_LEAP_KNOWN) */
};

struct clockd_page {
	/* 0: header, written when a daemon starts */
	uint32_t magic;
	uint32_t abi_version;
	uint32_t size;
	uint32_t hz;
	uint64_t generation; /* bumped at every daemon start */
	uint32_t flags;      /* CLOCKD_PAGE_* */
	uint32_t tick_ns;    /* tick period in ns, rounded up */
	uint64_t stale_ns;   /* clockd_status() calls a page this old STALE */
	int64_t start_mono_ns;    /* CLOCKD_MONOTONIC when this daemon started */
	uint64_t jiffies_base;    /* jiffies_64 at jiffies_epoch_ns */
	int64_t jiffies_epoch_ns; /* CLOCKD_MONOTONIC of tick 0 (ns) */
	uint64_t initial_jiffies; /* jiffies_64 of the page's first start */
	uint8_t boot_id[16];      /* kernel boot id of the writing daemon */
	char source[32];          /* clocksource name, NUL-terminated */
	char tick[32];            /* tick device name, NUL-terminated */
	uint32_t pid;             /* the daemon's process id (informative) */
	uint32_t pad0;
	char vclock_path[64];     /* device a client maps or opens for */
				  /* CLOCKD_VCLOCK_HPET and _PHC */
	uint64_t extrapolate_ns;  /* fine reads extrapolate this long past */
				  /* an update (0: stale_ns, an older daemon) */
	uint64_t reserved0[3];
	/* 256: latch sequence and writer liveness, one cache line */
	uint32_t seq;
	uint32_t alarm; /* nonzero: the daemon distrusts its own page */
	uint8_t writer_lock[56]; /* first 32-bit word: owner futex word */
	/* 320: the two copies */
	struct clockd_page_data data[2];
	uint8_t reserved1[1024 - 704];
	/* 1024: the device table */
	uint32_t dev_seq;
	uint32_t ndevices;
	uint64_t reserved2[7];
	struct clockd_page_device devices[CLOCKD_PAGE_MAX_DEVICES];
	uint8_t reserved3[CLOCKD_PAGE_SIZE - 2368];
};

/*
 * A compile-time check in every language this header is read in: C11's
 * _Static_assert, C++11's static_assert, and for C99 and C++98 a typedef of
 * an array whose size is negative when the check fails (named by line, so
 * each check declares its own type).
 */
#if defined(__cplusplus) && __cplusplus >= 201103L
#define CLOCKD_PAGE_STATIC_ASSERT(cond, msg) static_assert(cond, msg)
#elif !defined(__cplusplus) && defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define CLOCKD_PAGE_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#else
#define CLOCKD_PAGE_STATIC_ASSERT(cond, msg) CLOCKD_PAGE_STATIC_ASSERT_(cond, __LINE__)
#define CLOCKD_PAGE_STATIC_ASSERT_(cond, line) CLOCKD_PAGE_STATIC_ASSERT__(cond, line)
#define CLOCKD_PAGE_STATIC_ASSERT__(cond, line)                                \
	typedef char clockd_page_static_assert_##line[(cond) ? 1 : -1]
#endif

#define CLOCKD_PAGE_ASSERT_OFF(type, field, off)                               \
	CLOCKD_PAGE_STATIC_ASSERT(offsetof(struct type, field) == (off),       \
				  "clockd page ABI: " #type "." #field)

CLOCKD_PAGE_ASSERT_OFF(clockd_page_data, vclock_mode, 0);
CLOCKD_PAGE_ASSERT_OFF(clockd_page_data, vclock_clockid, 4);
CLOCKD_PAGE_ASSERT_OFF(clockd_page_data, cycle_last, 8);
CLOCKD_PAGE_ASSERT_OFF(clockd_page_data, mask, 16);
CLOCKD_PAGE_ASSERT_OFF(clockd_page_data, max_cycles, 24);
CLOCKD_PAGE_ASSERT_OFF(clockd_page_data, mult, 32);
CLOCKD_PAGE_ASSERT_OFF(clockd_page_data, shift, 36);
CLOCKD_PAGE_ASSERT_OFF(clockd_page_data, mono_sec, 40);
CLOCKD_PAGE_ASSERT_OFF(clockd_page_data, mono_snsec, 48);
CLOCKD_PAGE_ASSERT_OFF(clockd_page_data, real_sec, 56);
CLOCKD_PAGE_ASSERT_OFF(clockd_page_data, real_snsec, 64);
CLOCKD_PAGE_ASSERT_OFF(clockd_page_data, raw_sec, 72);
CLOCKD_PAGE_ASSERT_OFF(clockd_page_data, raw_snsec, 80);
CLOCKD_PAGE_ASSERT_OFF(clockd_page_data, raw_mult, 88);
CLOCKD_PAGE_ASSERT_OFF(clockd_page_data, xtime_nsec, 92);
CLOCKD_PAGE_ASSERT_OFF(clockd_page_data, xtime_sec, 96);
CLOCKD_PAGE_ASSERT_OFF(clockd_page_data, coarse_mono_sec, 104);
CLOCKD_PAGE_ASSERT_OFF(clockd_page_data, coarse_mono_nsec, 112);
CLOCKD_PAGE_ASSERT_OFF(clockd_page_data, leap, 116);
CLOCKD_PAGE_ASSERT_OFF(clockd_page_data, jiffies_64, 120);
CLOCKD_PAGE_ASSERT_OFF(clockd_page_data, kernel_mono_ns, 128);
CLOCKD_PAGE_ASSERT_OFF(clockd_page_data, offset_ns, 136);
CLOCKD_PAGE_ASSERT_OFF(clockd_page_data, freq_ppb, 144);
CLOCKD_PAGE_ASSERT_OFF(clockd_page_data, error_bound_ns, 152);
CLOCKD_PAGE_ASSERT_OFF(clockd_page_data, rms_offset_ns, 160);
CLOCKD_PAGE_ASSERT_OFF(clockd_page_data, skew_ppb, 168);
CLOCKD_PAGE_ASSERT_OFF(clockd_page_data, ref_mono_ns, 176);
CLOCKD_PAGE_ASSERT_OFF(clockd_page_data, disc_state, 184);
CLOCKD_PAGE_ASSERT_OFF(clockd_page_data, tai_offset, 188);
CLOCKD_PAGE_STATIC_ASSERT(sizeof(struct clockd_page_data) == 192, "clockd page ABI: data size");

CLOCKD_PAGE_ASSERT_OFF(clockd_page, magic, 0);
CLOCKD_PAGE_ASSERT_OFF(clockd_page, abi_version, 4);
CLOCKD_PAGE_ASSERT_OFF(clockd_page, size, 8);
CLOCKD_PAGE_ASSERT_OFF(clockd_page, hz, 12);
CLOCKD_PAGE_ASSERT_OFF(clockd_page, generation, 16);
CLOCKD_PAGE_ASSERT_OFF(clockd_page, flags, 24);
CLOCKD_PAGE_ASSERT_OFF(clockd_page, tick_ns, 28);
CLOCKD_PAGE_ASSERT_OFF(clockd_page, stale_ns, 32);
CLOCKD_PAGE_ASSERT_OFF(clockd_page, start_mono_ns, 40);
CLOCKD_PAGE_ASSERT_OFF(clockd_page, jiffies_base, 48);
CLOCKD_PAGE_ASSERT_OFF(clockd_page, jiffies_epoch_ns, 56);
CLOCKD_PAGE_ASSERT_OFF(clockd_page, initial_jiffies, 64);
CLOCKD_PAGE_ASSERT_OFF(clockd_page, boot_id, 72);
CLOCKD_PAGE_ASSERT_OFF(clockd_page, source, 88);
CLOCKD_PAGE_ASSERT_OFF(clockd_page, tick, 120);
CLOCKD_PAGE_ASSERT_OFF(clockd_page, pid, 152);
CLOCKD_PAGE_ASSERT_OFF(clockd_page, pad0, 156);
CLOCKD_PAGE_ASSERT_OFF(clockd_page, vclock_path, 160);
CLOCKD_PAGE_ASSERT_OFF(clockd_page, extrapolate_ns, 224);
CLOCKD_PAGE_ASSERT_OFF(clockd_page, reserved0, 232);
CLOCKD_PAGE_ASSERT_OFF(clockd_page, seq, 256);
CLOCKD_PAGE_ASSERT_OFF(clockd_page, alarm, 260);
CLOCKD_PAGE_ASSERT_OFF(clockd_page, writer_lock, 264);
CLOCKD_PAGE_ASSERT_OFF(clockd_page, data, 320);
CLOCKD_PAGE_ASSERT_OFF(clockd_page, reserved1, 704);
CLOCKD_PAGE_ASSERT_OFF(clockd_page, dev_seq, 1024);
CLOCKD_PAGE_ASSERT_OFF(clockd_page, ndevices, 1028);
CLOCKD_PAGE_ASSERT_OFF(clockd_page, devices, 1088);
CLOCKD_PAGE_ASSERT_OFF(clockd_page, reserved3, 2368);
CLOCKD_PAGE_ASSERT_OFF(clockd_page_device, name, 0);
CLOCKD_PAGE_ASSERT_OFF(clockd_page_device, device, 16);
CLOCKD_PAGE_ASSERT_OFF(clockd_page_device, role, 64);
CLOCKD_PAGE_ASSERT_OFF(clockd_page_device, state, 68);
CLOCKD_PAGE_ASSERT_OFF(clockd_page_device, fault, 72);
CLOCKD_PAGE_ASSERT_OFF(clockd_page_device, since_ns, 80);
CLOCKD_PAGE_ASSERT_OFF(clockd_page_device, faults, 88);
CLOCKD_PAGE_ASSERT_OFF(clockd_page_device, spurious, 96);
CLOCKD_PAGE_ASSERT_OFF(clockd_page_device, missed, 104);
CLOCKD_PAGE_STATIC_ASSERT(sizeof(struct clockd_page_device) == 128, "clockd page ABI: device size");
CLOCKD_PAGE_STATIC_ASSERT(sizeof(struct clockd_page) == CLOCKD_PAGE_SIZE, "clockd page ABI: size");

#if defined(__GNUC__) || defined(__clang__)
/*
 * The latch reader: every read of the time data, in the library, in the
 * inline reads of <clockd/clockd.h> and in the daemon, is this pair:
 *
 *     uint32_t seq;
 *     const struct clockd_page_data *d;
 *     do {
 *         d = clockd_page_read_begin(pg, &seq);
 *         x = __atomic_load_n(&d->field, __ATOMIC_RELAXED);
 *     } while (clockd_page_read_retry(pg, seq));
 *
 * Every load of *d between the two is a relaxed atomic one, so the pattern
 * is race-free for the C11 memory model (Boehm, "Can seqlocks get along
 * with programming language memory models?", 2012). It never blocks: it
 * retries only while the writer moved on, and a writer killed at any point
 * leaves the copy seq designates complete.
 */
static __inline__ __attribute__((__always_inline__)) const struct clockd_page_data *
clockd_page_read_begin(const struct clockd_page *pg, uint32_t *seq)
{
	*seq = __atomic_load_n(&pg->seq, __ATOMIC_ACQUIRE);
	return &pg->data[*seq & 1];
}

/* Nonzero: what was loaded since clockd_page_read_begin() may be torn,
 * read it again. */
static __inline__ __attribute__((__always_inline__)) int clockd_page_read_retry(const struct clockd_page *pg,
										 uint32_t seq)
{
	/* Pairs with the writer's release fence after it moved seq: if a load
	 * above saw a store made after that, the re-read below sees seq
	 * moved. */
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return __builtin_expect(__atomic_load_n(&pg->seq, __ATOMIC_RELAXED) != seq, 0);
}
#endif

#endif /* CLOCKD_PAGE_H */
