/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The read paths: clockd_clock_gettime() and friends. These are the hot
 * functions; they make no system call when the page is live and the CPU may
 * read the daemon's counter.
 */
#include <errno.h>
#include <stddef.h>

#include "libclockd/internal.h"
#include "shared/latch.h"
#include "shared/pagetime.h"
#include "shared/tickmath.h"
#include "shared/tsc.h"

clockid_t lib_kernel_equivalent(clockid_t id)
{
	switch (id) {
	case CLOCKD_REALTIME: return CLOCK_REALTIME;
	case CLOCKD_MONOTONIC: return CLOCK_MONOTONIC;
	case CLOCKD_MONOTONIC_RAW: return CLOCK_MONOTONIC_RAW;
	case CLOCKD_REALTIME_COARSE: return CLOCK_REALTIME_COARSE;
	case CLOCKD_MONOTONIC_COARSE: return CLOCK_MONOTONIC_COARSE;
	case CLOCKD_TAI: return CLOCK_TAI;
	default: return -1;
	}
}

bool lib_may_fall_back(int err)
{
	return __atomic_load_n(&lib_fallback, __ATOMIC_RELAXED) &&
	       (err == ENOENT || err == EACCES || err == EPROTO || err == ESTALE ||
		err == ENAMETOOLONG);
}

__attribute__((noinline)) int lib_read_failed(clockid_t id, struct timespec *ts, int err)
{
	if (err == ESTALE)
		lib_page_gone();
	if (lib_may_fall_back(err))
		return clock_gettime(lib_kernel_equivalent(id), ts);
	errno = err;
	return -1;
}

/* The counter as the client reads it: 1, 0 if it cannot (tick
 * resolution), -1 if the page names a device not of its mode (EPROTO). */
static inline __attribute__((always_inline)) int read_counter(uint32_t mode, int32_t clockid, uint64_t *c)
{
	if (__builtin_expect(mode == CLOCKD_VCLOCK_TSC, 1) && CLOCKD_HAVE_TSC) {
		*c = rdtsc_ordered();
		return 1;
	}
	if (mode == CLOCKD_VCLOCK_POSIX) {
		/* The kernel clock the daemon counts with, through the vDSO. */
		struct timespec ts;

		if (clock_gettime(clockid, &ts) != 0)
			return 0;
		/* In the initial namespace's terms, as the daemon reads it:
		 * a time namespace shifts the monotonic and boot clocks. */
		*c = (uint64_t)ts_to_ns(&ts) - (uint64_t)lib_timens_kernel(clockid);
		return 1;
	}
	if (mode == CLOCKD_VCLOCK_HPET || mode == CLOCKD_VCLOCK_PHC)
		return lib_vclock_read(mode, c);
	return 0;
}

static int read_coarse(clockid_t id, struct timespec *ts);

/* A monotonic clock of the page at @sec, @nsec as this process's time
 * namespace reads it (lib_timens_mono). */
static int timens_shift(int64_t sec, uint32_t nsec, struct timespec *ts)
{
	int64_t off = lib_timens_mono_ns();

	sec += off / (int64_t)NSEC_PER_SEC;
	off = (int64_t)nsec + off % (int64_t)NSEC_PER_SEC;
	if (off < 0) {
		off += NSEC_PER_SEC;
		sec--;
	} else if (off >= (int64_t)NSEC_PER_SEC) {
		off -= NSEC_PER_SEC;
		sec++;
	}
	ts->tv_sec = (time_t)sec;
	ts->tv_nsec = (long)off;
	return 0;
}
static int coarse_nopage(clockid_t id, struct timespec *ts);

/*
 * The general fine read: base + (counter - cycle_last) * mult >> shift, as
 * the vDSO, for any counter mode, the page not yet mapped, a counter behind
 * cycle_last, a stale page. The common case takes FINE_FAST below.
 * CLOCKD_TAI is realtime (@which PAGE_REAL) plus the TAI offset of the same
 * copy: the daemon changes both in one update at a leap second.
 */
static __attribute__((noinline)) int read_fine_slow(clockid_t id, enum page_clock which,
						    struct timespec *ts)
{
	int err = 0;
	const struct clockd_page *pg = lib_page(&err);
	const struct clockd_page_data *d;
	struct page_conv conv;
	uint64_t cycles;
	uint32_t seq, nsec = 0, leap;
	int64_t sec = 0;
	int32_t tai;
	int have_counter;

	if (__builtin_expect(!pg, 0))
		return lib_read_failed(id, ts, err);
	do {
		d = clockd_page_read_begin(pg, &seq);
		have_counter = read_counter(LOAD_RELAXED(&d->vclock_mode), LOAD_RELAXED(&d->vclock_clockid),
					    &cycles);
		page_conv_load(&conv, d, which);
		leap = LOAD_RELAXED(&d->leap);
		tai = LOAD_RELAXED(&d->tai_offset);
	} while (clockd_page_read_retry(pg, seq));

	/* A CPU that cannot read the daemon's counter gets the same clock at
	 * the last tick: tick resolution. */
	if (__builtin_expect(have_counter < 0, 0))
		return lib_read_failed(id, ts, EPROTO);
	if (__builtin_expect(!have_counter, 0))
		cycles = conv.cycle_last;
	err = -page_conv_at(&conv, cycles, &sec, &nsec);
	if (__builtin_expect(err == 0 && !lib_page_ok(pg), 0))
		err = ESTALE;
	if (__builtin_expect(err != 0, 0))
		return lib_read_failed(id, ts, err);
	if (which != PAGE_REAL)
		return timens_shift(sec, nsec, ts);
	if (id == CLOCKD_TAI) {
		if (!(leap & CLOCKD_LEAP_KNOWN)) {
			errno = EINVAL; /* not published: no TAI, never UTC as TAI */
			return -1;
		}
		sec += tai;
	}
	ts->tv_sec = (time_t)sec;
	ts->tv_nsec = (long)nsec;
	return 0;
}

static __attribute__((noinline)) int coarse_nopage(clockid_t id, struct timespec *ts)
{
	int err = 0;
	const struct clockd_page *pg = lib_page_open_slow(&err);

	if (!pg)
		return lib_read_failed(id, ts, err);
	return read_coarse(id, ts);
}

/* The coarse clocks: the values of the last tick. Every slow path is a
 * tail call, so the fast one needs no stack frame (it is a couple of ns). */
static __attribute__((noinline)) int read_coarse(clockid_t id, struct timespec *ts)
{
	const struct clockd_page *pg = __atomic_load_n(&lib_page_ptr, __ATOMIC_ACQUIRE);
	const struct clockd_page_data *d;
	uint32_t seq, nsec;
	int64_t sec;

	if (__builtin_expect(!pg, 0))
		return coarse_nopage(id, ts);
	do {
		d = clockd_page_read_begin(pg, &seq);
		if (id == CLOCKD_MONOTONIC_COARSE) {
			sec = LOAD_RELAXED(&d->coarse_mono_sec);
			nsec = LOAD_RELAXED(&d->coarse_mono_nsec);
		} else {
			sec = LOAD_RELAXED(&d->xtime_sec);
			nsec = LOAD_RELAXED(&d->xtime_nsec);
		}
	} while (clockd_page_read_retry(pg, seq));
	if (__builtin_expect(!lib_page_ok(pg), 0))
		return lib_read_failed(id, ts, ESTALE);
	/* Never hand on a timespec no clock could hold: a page that says so
	 * is not a page the daemon wrote (found by tests/fuzz/page-fuzz.c). */
	if (__builtin_expect(nsec >= NSEC_PER_SEC, 0))
		return lib_read_failed(id, ts, EPROTO);
	if (id == CLOCKD_MONOTONIC_COARSE && __builtin_expect(lib_timens_mono_ns() != 0, 0))
		return timens_shift(sec, nsec, ts);
	ts->tv_sec = (time_t)sec;
	ts->tv_nsec = (long)nsec;
	return 0;
}

/*
 * The fast path of each fine clock: a mapped page, a live daemon, a TSC
 * clients may read, a delta within the stale limit. It makes no call, so it
 * needs no stack frame; anything else is a tail call to read_fine_slow(),
 * which checks it all again.
 *
 * The counter is read first. lfence lets nothing after it start until
 * everything before it has finished, so reading the page first would put
 * those loads on the critical path; read first, the loads overlap rdtsc. It
 * stays ordered after every load the caller made before the call. A copy
 * published after the counter read has a cycle_last beyond it: the delta
 * is then "negative" (huge), and the slow path reads everything again.
 */
#define FINE_FAST(name, ID, WHICH, MULT, SEC, SNSEC, NS)                                 \
	static __attribute__((noinline)) int name(struct timespec *ts)                    \
	{                                                                                 \
		uint64_t cycles = rdtsc_ordered();                                        \
		const struct clockd_page *pg = __atomic_load_n(&lib_page_ptr, __ATOMIC_ACQUIRE); \
		const struct clockd_page_data *d;                                         \
		uint64_t delta, maxc, ns;                                                 \
		uint32_t seq, shift;                                                      \
		int64_t sec;                                                              \
                                                                                          \
		if (!CLOCKD_HAVE_TSC || __builtin_expect(!pg || !lib_page_ok(pg), 0) ||   \
		    (NS && __builtin_expect(lib_timens_mono_ns() != 0, 0)))              \
			return read_fine_slow(ID, WHICH, ts);                             \
		do {                                                                      \
			d = clockd_page_read_begin(pg, &seq);                             \
			if (__builtin_expect(LOAD_RELAXED(&d->vclock_mode) != CLOCKD_VCLOCK_TSC, 0)) \
				return read_fine_slow(ID, WHICH, ts);                     \
			delta = cycles - LOAD_RELAXED(&d->cycle_last);                    \
			maxc = LOAD_RELAXED(&d->max_cycles);                              \
			ns = LOAD_RELAXED(&d->SNSEC) + delta * LOAD_RELAXED(&d->MULT);    \
			shift = LOAD_RELAXED(&d->shift);                                  \
			sec = LOAD_RELAXED(&d->SEC);                                      \
		} while (clockd_page_read_retry(pg, seq));                                \
		if (__builtin_expect(delta > maxc, 0))                                    \
			return read_fine_slow(ID, WHICH, ts);                             \
		ns >>= shift & 63; /* see read_fine_slow */                              \
		if (__builtin_expect(ns >= NSEC_PER_SEC, 0)) {                            \
			if (__builtin_add_overflow(sec, (int64_t)(ns / NSEC_PER_SEC), &sec)) \
				return read_fine_slow(ID, WHICH, ts); /* says EPROTO */   \
			ns %= NSEC_PER_SEC;                                               \
		}                                                                         \
		ts->tv_sec = (time_t)sec;                                                 \
		ts->tv_nsec = (long)ns;                                                   \
		return 0;                                                                 \
	}

/* The monotonic ones of a process in a time namespace take the slow path,
 * which adds its offset. */
FINE_FAST(read_mono, CLOCKD_MONOTONIC, PAGE_MONO, mult, mono_sec, mono_snsec, 1)
FINE_FAST(read_real, CLOCKD_REALTIME, PAGE_REAL, mult, real_sec, real_snsec, 0)
FINE_FAST(read_raw, CLOCKD_MONOTONIC_RAW, PAGE_RAW, raw_mult, raw_sec, raw_snsec, 1)

static __attribute__((noinline)) int efault(void)
{
	errno = EFAULT;
	return -1;
}

/* A dispatcher of tail calls only: no path pays for another's registers
 * (the coarse reads are a few ns in all). */
CLOCKD_EXPORT int clockd_clock_gettime(clockid_t id, struct timespec *ts)
{
	if (__builtin_expect(ts == NULL, 0))
		return efault();
	/* The coarse clocks first (a compare is a tenth of their cost, and
	 * nothing next to the fine ones'), then the clock most programs read. */
	if ((uint32_t)(id - CLOCKD_REALTIME_COARSE) <= CLOCKD_MONOTONIC_COARSE - CLOCKD_REALTIME_COARSE)
		return read_coarse(id, ts);
	if (__builtin_expect(id == CLOCKD_MONOTONIC, 1))
		return read_mono(ts);
	switch (id) {
	case CLOCKD_REALTIME:
		return read_real(ts);
	case CLOCKD_MONOTONIC_RAW:
		return read_raw(ts);
	case CLOCKD_TAI:
		return read_fine_slow(id, PAGE_REAL, ts);
	default:
		return clock_gettime(id, ts);
	}
}

/* The out-of-line half of the inline fine read (clockd.h). */
CLOCKD_EXPORT int clockd_fine_slow_(clockid_t id, struct timespec *ts, const struct clockd_page **cache)
{
	int r = clockd_clock_gettime(id, ts);

	if (cache && !lib_timens_mono_ns())
		__atomic_store_n(cache, __atomic_load_n(&lib_page_ptr, __ATOMIC_ACQUIRE), __ATOMIC_RELEASE);
	return r;
}

/* The out-of-line half of the inline coarse read (clockd.h). */
CLOCKD_EXPORT int clockd_coarse_slow_(clockid_t id, struct timespec *ts, const struct clockd_page **cache)
{
	int r = clockd_clock_gettime(id, ts);

	if (cache && !lib_timens_mono_ns())
		__atomic_store_n(cache, __atomic_load_n(&lib_page_ptr, __ATOMIC_ACQUIRE), __ATOMIC_RELEASE);
	return r;
}

CLOCKD_EXPORT int clockd_clock_getres(clockid_t id, struct timespec *res)
{
	const struct clockd_page *pg;
	struct clockd_page_data d;
	uint64_t ns;
	int err = 0;

	if ((uint32_t)(id - CLOCKD_CLOCK_BASE) >= CLOCKD_CLOCK_COUNT)
		return clock_getres(id, res);
	pg = lib_page(&err);
	if (!pg) {
		if (lib_may_fall_back(err))
			return clock_getres(lib_kernel_equivalent(id), res);
		errno = err;
		return -1;
	}
	if (!res)
		return 0;
	latch_snapshot(pg, &d);
	if (id == CLOCKD_MONOTONIC_COARSE || id == CLOCKD_REALTIME_COARSE ||
	    d.vclock_mode == CLOCKD_VCLOCK_NONE || (d.vclock_mode == CLOCKD_VCLOCK_TSC && !CLOCKD_HAVE_TSC)) {
		ns = LOAD_RELAXED(&pg->tick_ns);
	} else {
		uint32_t m = id == CLOCKD_MONOTONIC_RAW ? d.raw_mult : d.mult;

		/* One counter step, rounded up, at least 1 ns. The daemon's
		 * shift is below 32; a page saying 64 or more is not its. */
		if (d.shift > 63) {
			errno = EPROTO;
			return -1;
		}
		ns = ((uint64_t)m + (1ull << d.shift) - 1) >> d.shift;
		if (ns == 0)
			ns = 1;
	}
	*res = ns_to_ts((int64_t)ns);
	return 0;
}

CLOCKD_EXPORT int clockd_set_fallback(int enable)
{
	if (enable != 0 && enable != 1) {
		errno = EINVAL;
		return -1;
	}
	(void)lib_page_path(); /* $CLOCKD_FALLBACK is read first, once */
	return __atomic_exchange_n(&lib_fallback, enable, __ATOMIC_RELAXED);
}

CLOCKD_EXPORT const char *clockd_version(void)
{
	return PACKAGE_VERSION;
}
