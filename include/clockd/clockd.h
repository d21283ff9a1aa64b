/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libclockd: time from the clockd daemon, read from a shared page with no
 * system call.
 *
 * Error convention (the POSIX one, as clock_gettime(2)): functions returning
 * int return 0 on success and -1 with errno set on failure. Functions that
 * return a value (jiffies, HZ, a timespec) return 0 (or a zero timespec) on
 * failure and set errno; callers that must tell a real 0 from a failure set
 * errno to 0 before the call. Success never changes errno.
 *
 * errno values used throughout:
 *   EINVAL  unknown clock id (not a clockd clock, and the kernel refused it)
 *   EFAULT  a NULL pointer where a result was to be stored
 *   ENOENT  no time page at the page path: the daemon never ran there
 *   EACCES  the page exists but this process may not read it
 *   EPROTO  the file is not a clockd page of this ABI (bad magic, ABI
 *           version, size, or a truncated file), or holds a time no
 *           daemon writes (nanoseconds out of range, seconds overflowing)
 *   ENAMETOOLONG  $CLOCKD_SHM is 256 bytes or longer
 *   ESTALE  the daemon that wrote the page is gone (exited or killed), has
 *           raised the page's alarm (its source faulted, or no update
 *           for the extrapolation bound), or, for the fine clocks, has
 *           not updated it within that bound (page->extrapolate_ns,
 *           clockd.conf extrapolate_max_s, 10 s by default). Other errors
 *           of open(2) and mmap(2) on the page pass through.
 *
 * Stale is not gone: while its daemon lives, a page the daemon is late to
 * update is read as the kernel's vDSO reads its own: the fine clocks are
 * extrapolated from the counter and the last update (never backward,
 * with the ordering below), the coarse clocks and jiffies keep the last
 * tick's values, and the daemon's next update publishes the time and
 * jiffies of that moment, never less than anything read.
 *
 * Fallback: after clockd_set_fallback(1), a read that would fail with
 * ENOENT, EACCES, EPROTO or ESTALE instead returns the kernel's clock of the
 * same kind (CLOCKD_MONOTONIC -> CLOCK_MONOTONIC, ...) and succeeds;
 * clockd_status() still tells the truth.
 *
 * Instance: the page path is $CLOCKD_SHM if set, else CLOCKD_DEFAULT_PAGE. It
 * is read once, at the first call of any function here (lazy, thread-safe
 * initialisation; no explicit init is needed).
 *
 * Thread safety: every function may be called from any thread at any time.
 *
 * Ordering: the fine clocks read the counter with an ordered read (lfence;
 * rdtsc on x86). A value read by one thread, then by another thread after
 * the two synchronised (a mutex, an atomic with acquire/release), is never
 * earlier than the first.
 */
#ifndef CLOCKD_CLOCKD_H
#define CLOCKD_CLOCKD_H

#include <stddef.h>
#include <stdint.h>
#include <signal.h>
#include <time.h>

/*
 * The POSIX types used here (clockid_t, struct timespec, struct itimerspec,
 * union sigval) are hidden by glibc's <time.h> and <signal.h> in a strict
 * ISO C mode (-std=c99, -std=c11 with no _POSIX_C_SOURCE or _GNU_SOURCE),
 * and the feature-test macros cannot be changed once a C library header
 * has been read. So no feature-test macro is needed: when glibc hides
 * them, they come from glibc's own per-type headers, and union sigval (of
 * the same layout as glibc's internal union __sigval) is declared here. Any
 * include order works. (Other C libraries: define _POSIX_C_SOURCE in a
 * strict mode.) C++ compilers always see them (g++ defines _GNU_SOURCE).
 */
#if defined(__GLIBC__) && !defined(__USE_POSIX199309)
#include <bits/types/clockid_t.h>
#include <bits/types/struct_timespec.h>
#include <bits/types/struct_itimerspec.h>
union sigval {
	int sival_int;
	void *sival_ptr;
};
#endif

/*
 * The coarse reads and jiffies are inline (see "Inline reads" at the end)
 * in C with GCC or clang on x86-64 and arm64, unless CLOCKD_NO_INLINE is
 * defined before this header is read.
 */
#if !defined(CLOCKD_NO_INLINE) && defined(__GNUC__) && (defined(__x86_64__) || defined(__aarch64__))
#define CLOCKD_INLINE_READS 1
#include <clockd/page.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define CLOCKD_DEFAULT_PAGE "/run/clockd/page"

/*
 * clockd clock ids. The kernel's static clock ids are small non-negative
 * numbers (below MAX_CLOCKS, 16 in Linux 6.x) and its CPU-time and dynamic
 * (fd) clock ids are negative; these sit far above both and the kernel
 * refuses them with EINVAL, so they can never name a kernel clock.
 */
#define CLOCKD_CLOCK_BASE ((clockid_t)0x434b0000)
#define CLOCKD_REALTIME ((clockid_t)(CLOCKD_CLOCK_BASE + 0))
#define CLOCKD_MONOTONIC ((clockid_t)(CLOCKD_CLOCK_BASE + 1))
#define CLOCKD_MONOTONIC_RAW ((clockid_t)(CLOCKD_CLOCK_BASE + 2))
#define CLOCKD_REALTIME_COARSE ((clockid_t)(CLOCKD_CLOCK_BASE + 3))
#define CLOCKD_MONOTONIC_COARSE ((clockid_t)(CLOCKD_CLOCK_BASE + 4))
/* Since 0.4: CLOCKD_REALTIME plus the kernel's TAI offset, both from one
 * update of the page, so it never steps at a leap second (realtime repeats
 * 23:59:59, the offset goes up by one at the same instant). EINVAL from a
 * daemon that does not publish the offset (<clockd/page.h>: no
 * CLOCKD_LEAP_KNOWN). */
#define CLOCKD_TAI ((clockid_t)(CLOCKD_CLOCK_BASE + 5))
#define CLOCKD_CLOCK_COUNT 6

/*
 * Read clock @id into *@ts. A clockd id reads the page; any other id is
 * passed to the kernel's clock_gettime() unchanged (so this is a drop-in
 * replacement). The fine clocks (REALTIME, MONOTONIC, MONOTONIC_RAW) have
 * nanosecond resolution when this CPU may read the daemon's counter, tick
 * resolution otherwise. The coarse clocks are the values of the last tick
 * (inline with a constant id, see "Inline reads" at the end).
 */
int clockd_clock_gettime(clockid_t id, struct timespec *ts);

/* Resolution of clock @id: for a fine clock read from the counter, one
 * counter step rounded up to whole ns (1 ns for a counter of 1 GHz or
 * more); the tick period, rounded up, otherwise. Kernel ids pass through. @res may be
 * NULL (then only the id is checked), as in clock_getres(2). */
int clockd_clock_getres(clockid_t id, struct timespec *res);

/* The 64-bit tick count, the kernel's get_jiffies_64(). */
uint64_t clockd_get_jiffies_64(void);
/* Its low 32 bits, the kernel's jiffies (wraps; compare with time_after). */
uint32_t clockd_jiffies(void);
/* Ticks per second of the daemon that wrote the page (0 with errno set if
 * there is no readable page; it does not check that the daemon lives). */
unsigned int clockd_hz(void);
/* xtime: CLOCKD_REALTIME at the last tick, the kernel's current_kernel_time(). */
struct timespec clockd_current_kernel_time(void);

/* Jiffies conversions at the daemon's HZ. To a duration they round down;
 * from a duration they round up, so a timeout is never shorter than asked
 * (the kernel's msecs_to_jiffies). Results saturate at UINT64_MAX. */
uint64_t clockd_jiffies_to_msecs(uint64_t j);
uint64_t clockd_jiffies_to_usecs(uint64_t j);
uint64_t clockd_jiffies_to_nsecs(uint64_t j);
uint64_t clockd_msecs_to_jiffies(uint64_t ms);
uint64_t clockd_usecs_to_jiffies(uint64_t us);
uint64_t clockd_nsecs_to_jiffies(uint64_t ns);

/* Wrap-safe comparisons, as the kernel's time_after() family: true when a
 * is after b, assuming they are less than half the counter's range apart. */
static inline int clockd_time_after(uint32_t a, uint32_t b)
{
	return (int32_t)(b - a) < 0;
}
static inline int clockd_time_before(uint32_t a, uint32_t b)
{
	return clockd_time_after(b, a);
}
static inline int clockd_time_after_eq(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) >= 0;
}
static inline int clockd_time_before_eq(uint32_t a, uint32_t b)
{
	return clockd_time_after_eq(b, a);
}
static inline int clockd_time_after64(uint64_t a, uint64_t b)
{
	return (int64_t)(b - a) < 0;
}
static inline int clockd_time_before64(uint64_t a, uint64_t b)
{
	return clockd_time_after64(b, a);
}
static inline int clockd_time_after_eq64(uint64_t a, uint64_t b)
{
	return (int64_t)(a - b) >= 0;
}
static inline int clockd_time_before_eq64(uint64_t a, uint64_t b)
{
	return clockd_time_after_eq64(b, a);
}

/* What clockd_status() finds. */
enum clockd_state {
	CLOCKD_STATE_ABSENT = 0, /* no page, or not readable (see errno_hint) */
	CLOCKD_STATE_LIVE = 1,   /* a daemon owns the page and updates it */
	CLOCKD_STATE_STALE = 2,  /* the daemon is alive but silent for stale_ns */
	CLOCKD_STATE_GONE = 3    /* the daemon exited or died */
};

/*
 * A snapshot of the page for tools (clockctl) and monitoring. Fixed-width
 * fields; new fields are added only at the end, and callers pass
 * sizeof(struct clockd_status) so an old caller keeps working.
 */
struct clockd_status {
	uint32_t state;      /* enum clockd_state */
	int32_t errno_hint;  /* for ABSENT/STALE/GONE: the errno a read gets */
			     /* (0 while a stale page is extrapolated) */
	uint32_t hz;
	uint32_t flags;      /* CLOCKD_PAGE_* from <clockd/page.h> */
	uint64_t generation; /* daemon starts on this page */
	uint32_t pid;        /* daemon process id as it wrote it */
	uint32_t vclock_mode; /* CLOCKD_VCLOCK_* */
	uint64_t jiffies_64;
	int64_t xtime_sec;
	int64_t xtime_nsec;
	int64_t mono_ns;     /* CLOCKD_MONOTONIC now (ns) */
	int64_t uptime_ns;   /* since this daemon started */
	int64_t age_ns;      /* since the last update, kernel CLOCK_MONOTONIC */
	uint64_t stale_ns;   /* the page's stale limit */
	uint64_t initial_jiffies;
	int64_t freq_ppb;
	int64_t offset_ns;
	char source[32];
	char tick[32];
	char page_path[256];
	/* since 0.4 */
	uint64_t extrapolate_ns; /* fine reads extrapolate this long past an update */
	/* since 0.4: the kernel's leap second state, as the daemon follows it */
	uint32_t leap;       /* CLOCKD_LEAP_* of <clockd/page.h>: NONE, INSERT or */
			     /* DELETE at the end of the UTC day, | KNOWN; 0: an */
			     /* older daemon, nothing known */
	int32_t tai_offset;  /* TAI - UTC in s (with CLOCKD_LEAP_KNOWN only) */
};

/* Size of the first version of struct clockd_status (0.1). */
#define CLOCKD_STATUS_SIZE_V1 432

/* Fill *@st (of @size bytes, pass sizeof(*st)); a caller built against an
 * older, smaller struct gets just its fields. Returns 0 whenever it could
 * look, including for ABSENT/STALE/GONE states; -1 with EFAULT/EINVAL for a
 * NULL @st or a @size smaller than CLOCKD_STATUS_SIZE_V1. */
int clockd_status(struct clockd_status *st, size_t size);

/*
 * The daemon's devices (since 0.2): every clocksource and tick device its
 * configuration lists, in order of preference, with its state. role, state
 * and fault take the CLOCKD_DEV_* and CLOCKD_FAULT_* values of
 * <clockd/page.h>.
 */
struct clockd_device {
	char name[16];    /* driver: tsc, hpet, phc, posix, sim, timerfd, rtc, gpio */
	char device[48];  /* device path or detail */
	uint32_t role;    /* CLOCKD_DEV_SOURCE or CLOCKD_DEV_TICK */
	uint32_t state;   /* CLOCKD_DEV_STANDBY, _ACTIVE, _FAULT, _UNAVAILABLE */
	uint32_t fault;   /* CLOCKD_FAULT_*: the last fault seen */
	uint32_t pad0;
	int64_t since_ns; /* kernel CLOCK_MONOTONIC of the last state change */
	uint64_t faults;  /* fault events */
	uint64_t spurious; /* tick devices: pulses rejected as spurious */
	uint64_t missed;  /* tick devices: pulses that did not come */
};

/* Size of the first version of struct clockd_device (0.2). */
#define CLOCKD_DEVICE_SIZE_V1 112

/* Copy up to @max devices into @dev, an array of entries of @size bytes
 * each (pass sizeof(struct clockd_device)), as clockd_status() takes a
 * size: a caller built against an older, smaller struct gets just its
 * fields, so the struct can grow (since 0.4). Returns how many devices the
 * daemon has (may exceed @max), or -1 with errno: EFAULT (NULL @dev with
 * @max > 0), EINVAL (@size below CLOCKD_DEVICE_SIZE_V1, or a negative
 * @max), the page errors of clockd_clock_gettime (ENOENT, EACCES, EPROTO,
 * ...), or EAGAIN if the table kept changing under the read. The page of a
 * daemon that is gone still shows its last states. */
int clockd_devices2(struct clockd_device *dev, size_t size, int max);
/* The same for entries of the first version's size,
 * clockd_devices2(dev, CLOCKD_DEVICE_SIZE_V1, max) (a negative @max is 0):
 * kept for programs built against 0.2 and 0.3. */
int clockd_devices(struct clockd_device *dev, int max);

/*
 * The discipline (since 0.2): how clockd's clock follows its reference
 * (clockd.conf: reference), as chronyc tracking shows. state takes the
 * CLOCKD_DISC_* values of <clockd/page.h>.
 */
struct clockd_tracking {
	uint32_t state;          /* CLOCKD_DISC_NONE, _UNLOCKED, _ACQUIRING, _LOCKED, _HOLDOVER */
	uint32_t synced;         /* 1 when locked (the page's SYNCED flag) */
	char reference[16];      /* driver: system, sim, gpio, phc; "" for none */
	char device[48];
	int64_t offset_ns;       /* estimated offset to the reference (clockd - reference) */
	int64_t rms_offset_ns;   /* RMS of recent estimated offsets */
	int64_t freq_ppb;        /* rate correction applied */
	int64_t skew_ppb;        /* estimated error of freq_ppb */
	uint64_t error_bound_ns; /* estimated maximum error */
	int64_t since_event_ns;  /* since the last reference event, -1: none yet */
};

/* Fill *@t (of @size bytes, pass sizeof(*t)). 0, or -1 with errno as
 * clockd_devices2(), EINVAL for a @size smaller than this first version. */
int clockd_tracking(struct clockd_tracking *t, size_t size);

/*
 * Names (since 0.4) of the values in struct clockd_status, clockd_device and
 * clockd_tracking, as the daemon logs them and clockctl prints them. Each
 * returns a static string (never NULL, never to be freed), "unknown" for a
 * value it does not know (a newer daemon's).
 */
/* enum clockd_state: "absent", "live", "stale", "gone". */
const char *clockd_state_name(uint32_t state);
/* CLOCKD_DEV_SOURCE, _TICK, _REFERENCE: "source", "tick", "ref". */
const char *clockd_device_role_name(uint32_t role);
/* CLOCKD_DEV_STANDBY, _ACTIVE, _FAULT, _UNAVAILABLE: "standby", "active",
 * "fault", "unavailable". */
const char *clockd_device_state_name(uint32_t state);
/* CLOCKD_FAULT_*: "none", "open", "stalled", "backwards", "stepped", "gone",
 * "error". */
const char *clockd_fault_name(uint32_t fault);
/* CLOCKD_DISC_*: "none", "unlocked", "acquiring", "locked", "holdover". */
const char *clockd_disc_state_name(uint32_t state);

/*
 * Timer statistics (since 0.4): the daemon's timer bases, one per CPU it
 * runs timers on, and its timer clients, asked over the control socket (see
 * "The connection" below; no timer need be armed, and these calls do not
 * make the connection the timer calls use). Each call opens a connection of
 * its own, asks, and closes it; the two lists are not one snapshot.
 */
struct clockd_timer_cpu_stats {
	uint32_t cpu;             /* the CPU the base's thread is pinned to */
	uint32_t clients;         /* clients with a delivery ring on it */
	uint64_t pending_jiffies; /* pending timers on the jiffies wheel */
	uint64_t pending_ns;      /* pending nanosecond timers */
	uint64_t fired;           /* expiries delivered */
	uint64_t overruns;        /* expiries folded into overrun counts */
	int64_t next_expiry_ns;   /* kernel CLOCK_MONOTONIC of the next expiry; -1: none */
	uint64_t late_p50_ns;     /* lateness of recent expiries: median, */
	uint64_t late_p99_ns;     /* 99th percentile */
	uint64_t late_max_ns;     /* and maximum */
};
#define CLOCKD_TIMER_CPU_STATS_SIZE_V1 72

struct clockd_timer_client_stats {
	uint32_t pid;      /* the client's process and user (SO_PEERCRED) */
	uint32_t uid;
	uint64_t pending;  /* its pending timers */
	uint64_t fired;
	uint64_t overruns;
	uint64_t dropped;  /* records its full rings could not take */
};
#define CLOCKD_TIMER_CLIENT_STATS_SIZE_V1 40

/*
 * Fill up to @max entries of the array @st, whose elements are @size bytes
 * each (pass sizeof(*st): a caller built against an older, smaller struct
 * gets just its fields, and a larger one gets zeros after ours). Returns how
 * many entries the daemon has (may exceed @max), or -1 with errno: EINVAL
 * for a @size below the first version's, EFAULT for a NULL @st with @max >
 * 0, the connection's errors (ENOENT or ECONNREFUSED: no daemon listens;
 * EACCES: not in the socket's group), ETIMEDOUT (no answer within 5 s),
 * EPROTO (a broken answer), or the errno of the daemon's refusal.
 */
int clockd_timer_cpu_stats(struct clockd_timer_cpu_stats *st, size_t size, int max);
int clockd_timer_client_stats(struct clockd_timer_client_stats *st, size_t size, int max);

/*
 * Sleeps and delays (since 0.3).
 *
 * clockd_clock_nanosleep() is clock_nanosleep(2) on a clockd clock: it
 * returns 0 or an error number (it does not set errno): EINVAL for a
 * tv_nsec outside 0..999999999, a negative tv_sec or an unknown flag,
 * EFAULT for a NULL @req, EINTR when a signal handler ran (with the time
 * left in *@rem for a relative sleep, if @rem is not NULL), or a page error
 * of clockd_clock_gettime (ENOENT, ESTALE, ...; none with the fallback on).
 * It never returns 0 before the clock reads the target: the clockd clock
 * may run at another rate than the kernel's, so it sleeps on the kernel's
 * clock for a little less than what is left, reads again, and spins the
 * last 50 us. TIMER_ABSTIME sleeps on CLOCKD_REALTIME see a step of the
 * clock within 100 ms (they sleep in rounds of 100 ms at most). EINTR is
 * returned when the signal arrives during a round's sleep in the kernel;
 * one handled between rounds or in the last 50 us does not cut it short.
 * Any other (kernel) clock id is passed to clock_nanosleep() unchanged.
 */
int clockd_clock_nanosleep(clockid_t id, int flags, const struct timespec *req, struct timespec *rem);

/* Busy-wait delays, the kernel's ndelay/udelay/mdelay: they spin reading
 * CLOCKD_MONOTONIC from the moment of the call (the daemon's calibrated
 * counter, so the resolution is one read, some tens of ns), and never end
 * sooner than asked. Without a live daemon, or when this process cannot
 * read the daemon's counter (clockd_clock_getres above 1 us), they spin on
 * the kernel's CLOCK_MONOTONIC. Not interrupted by signals (a handler's
 * time counts). */
void clockd_ndelay(unsigned long ns);
void clockd_udelay(unsigned long us);
void clockd_mdelay(unsigned long ms);

/*
 * Timers (since 0.3): the daemon expires them on a thread pinned to the
 * chosen CPU, and the callback runs on that CPU, in a thread of the library
 * pinned there (or, after clockd_fd(), in the thread that calls
 * clockd_dispatch()). Arming and cancelling cost no system call in the
 * common case: they are records in a ring the daemon drains.
 *
 * The connection: made at the first timer call, to the control socket at
 * $CLOCKD_SOCKET, else the file "control" beside the page (see Instance
 * above: so CLOCKD_DEFAULT_SOCKET with the default page). Further errno
 * values:
 *   ECONNREFUSED, ENOENT  no daemon listens at the socket path (or the
 *            one there hung up before answering)
 *   EACCES   the socket is not ours to use
 *   ENXIO    the daemon runs no timers on that CPU
 *   EAGAIN   a resource limit: this process has as many timers armed as
 *            client_max_timers allows, or the daemon refused the
 *            connection (too many clients, out of descriptors); past its
 *            user's max_timers_per_user the daemon refuses the arm, and
 *            the timer's next call reports EAGAIN (not pending)
 *   EBUSY    the call needs the timer not pending (clockd_add_timer*), or
 *            clockd_fd() after the first timer call
 *   EDEADLK  clockd_del_timer_sync() or clockd_timer_delete() from the
 *            timer's own callback
 *   ECONNRESET  the daemon went away and none came back within the
 *            reconnect timeout (below): timers pending then are lost
 *            (not pending any more, their callbacks do not run); the next
 *            call connects again
 *   EPROTO   the daemon broke the protocol
 *
 * Callbacks may re-arm (clockd_mod_timer, clockd_add_timer_on) or delete
 * (clockd_del_timer) their own timer and arm or delete others. They must
 * not call clockd_del_timer_sync() or clockd_timer_delete() on their own
 * timer (EDEADLK), nor block for long: the callbacks of one CPU run one
 * after another, in expiry order, and a slow one delays the rest (a
 * periodic timer then counts overruns).
 */
#define CLOCKD_DEFAULT_SOCKET "/run/clockd/control"

struct clockd_timer;
typedef void clockd_timer_fn(struct clockd_timer *timer, void *arg);

/* A kernel-flavoured timer (the kernel's struct timer_list): the caller
 * owns the memory; set it up once with clockd_timer_setup(), and do not
 * free or set it up again while it is pending or its callback runs
 * (clockd_del_timer_sync() first). */
struct clockd_timer {
	uint64_t expires;      /* jiffies_64 it is (or was last) armed for */
	clockd_timer_fn *fn;
	void *arg;
	uint64_t lib[6];       /* the library's; do not touch */
};

/* Prepare @timer to call @fn(@timer, @arg) when it expires. */
int clockd_timer_setup(struct clockd_timer *timer, clockd_timer_fn *fn, void *arg);
/* Arm @timer for jiffies_64 @expires on the calling thread's current CPU
 * (or, if the daemon runs no timers there, the lowest CPU it does), as the
 * kernel's add_timer(). An expiry already past runs at the next tick.
 * EBUSY if it is pending. */
int clockd_add_timer(struct clockd_timer *timer, uint64_t expires);
/* The same on CPU @cpu: add_timer_on(). */
int clockd_add_timer_on(struct clockd_timer *timer, uint64_t expires, unsigned int cpu);
/* (Re-)arm @timer for @expires on the CPU it was last armed on (the
 * current CPU if never): 1 if it was pending, 0 if not, -1 on error. */
int clockd_mod_timer(struct clockd_timer *timer, uint64_t expires);
/* Disarm @timer: 1 if it was pending, 0 if not, -1 on error. Its callback
 * may be running (on another thread) when this returns. */
int clockd_del_timer(struct clockd_timer *timer);
/* clockd_del_timer(), then wait until its callback is not running. */
int clockd_del_timer_sync(struct clockd_timer *timer);
/* 1 if @timer is pending (armed, not yet run or deleted), else 0. */
int clockd_timer_pending(const struct clockd_timer *timer);

/* POSIX-flavoured timers: clockd_timer_create() and friends work as
 * timer_create(2) and friends, on CLOCKD_MONOTONIC or CLOCKD_REALTIME,
 * with these notifications: */
#define CLOCKD_SIGEV_NONE 0       /* none: poll with clockd_timer_gettime() */
#define CLOCKD_SIGEV_SIGNAL 1     /* signo with value to this process, SI_TIMER,
				   * at most one queued (timer_create) */
#define CLOCKD_SIGEV_THREAD_CPU 2 /* fn(value) on the library's thread pinned to cpu */
#define CLOCKD_SIGEV_FD 3         /* clockd_timer_fd() becomes readable: read(2)
				   * 8 bytes, the expiries since the last read */

struct clockd_sigevent {
	int notify;          /* CLOCKD_SIGEV_* */
	int signo;           /* CLOCKD_SIGEV_SIGNAL */
	int cpu;             /* the CPU the timer expires on; -1: the CPU the
			      * thread runs on at the first arming (the first
			      * clockd_timer_settime; the lowest the daemon
			      * serves if not that one), kept after */
	void (*fn)(union sigval value); /* CLOCKD_SIGEV_THREAD_CPU */
	union sigval value;
};

typedef struct clockd_posix_timer *clockd_timer_t;

/* @clock: CLOCKD_MONOTONIC or CLOCKD_REALTIME (else EINVAL). @sev NULL:
 * CLOCKD_SIGEV_SIGNAL with SIGALRM and cpu -1, as timer_create. */
int clockd_timer_create(clockid_t clock, const struct clockd_sigevent *sev, clockd_timer_t *timerid);
/* flags: 0 or TIMER_ABSTIME; it_value zero disarms; an it_interval under
 * 1 us is rounded up to 1 us. Async-signal-safe, as are
 * clockd_timer_gettime() and clockd_timer_getoverrun(). */
int clockd_timer_settime(clockd_timer_t timerid, int flags, const struct itimerspec *value,
			 struct itimerspec *old);
int clockd_timer_gettime(clockd_timer_t timerid, struct itimerspec *value);
/* The expiries coalesced into the last one notified (as timer_getoverrun),
 * in the timer's own periods, at most INT_MAX. */
int clockd_timer_getoverrun(clockd_timer_t timerid);
/* Disarm and free; waits for a running callback of the timer. */
int clockd_timer_delete(clockd_timer_t timerid);
/* CLOCKD_SIGEV_FD: the descriptor (an eventfd owned by the timer: do not
 * close it), else -1 EINVAL. It is non-blocking (read(2) fails with EAGAIN
 * before an expiry) and close-on-exec: poll it, then read 8 bytes. */
int clockd_timer_fd(clockd_timer_t timerid);

/*
 * Event-loop integration: after clockd_fd(), every timer callback (and
 * CLOCKD_SIGEV_THREAD_CPU function) of this process runs in whichever
 * thread calls clockd_dispatch(), not on a pinned thread. clockd_fd()
 * returns a descriptor (an epoll descriptor, close-on-exec, owned by the
 * library: poll it, do not read or close it) that is readable while
 * callbacks are due; it must
 * be called before the first timer call (EBUSY after), and returns the
 * same descriptor when called again. clockd_dispatch() never blocks: it
 * runs every due callback and returns how many ran (0 if none), or -1 with
 * errno.
 */
int clockd_fd(void);
int clockd_dispatch(void);

/*
 * Daemon restarts (since 0.4): when the daemon goes away (killed, crashed,
 * restarted), pending timers stay pending. A thread of the library tries
 * the control socket again (1 ms after the loss, then at doubling
 * intervals of at most 50 ms), and an arming call tries too; the first
 * daemon that serves it gets every pending timer armed again at its
 * original absolute expiry: POSIX timers in ns of their clock, jiffies
 * timers in jiffies (the page never lets jiffies run backward across a
 * restart), carried over in time when the new daemon runs at another HZ
 * (converted to CLOCKD_MONOTONIC at the old HZ and back, rounded up).
 * A timer pinned to a CPU (clockd_add_timer_on(), sev.cpu) that the new
 * daemon does not serve is not moved: it stops being pending, its
 * callback does not run, and its next call fails with ENXIO. An expiry that passed meanwhile runs at once, never early; a
 * periodic timer keeps its phase and counts the periods missed as
 * overruns (clockd_timer_getoverrun()). Timers armed, modified or
 * cancelled while disconnected take effect there (a cancelled one is not
 * armed again; clockd_del_timer*() and clockd_timer_delete() work as
 * usual). Only when no daemon comes back within @ms milliseconds of the
 * loss are the timers lost (the ECONNRESET case above). 0 restores the
 * behaviour of 0.3: lost at once. Default 5000 (systemd restarts clockd
 * 1 s after it dies; a loaded machine gets the rest), or
 * $CLOCKD_RECONNECT_MS read at load time. Per process; applies to a
 * disconnection under way too (counted from the loss). Returns 0.
 */
int clockd_set_reconnect_timeout(uint32_t ms);

/* Enable (1) or disable (0) the kernel-clock fallback described at the top
 * of this file. Returns the previous setting, or -1 with EINVAL. Default:
 * disabled, or enabled when $CLOCKD_FALLBACK is "kernel". */
int clockd_set_fallback(int enable);

/* The library's version string, e.g. "0.1.0". */
const char *clockd_version(void);

/*
 * The out-of-line halves of the inline reads below (since 0.4; not to be
 * called directly): clockd_get_jiffies_64() and clockd_clock_gettime(@id),
 * which also store in *@cache where the page is mapped now.
 */
struct clockd_page;
uint64_t clockd_jiffies_slow_(const struct clockd_page **cache);
int clockd_coarse_slow_(clockid_t id, struct timespec *ts, const struct clockd_page **cache);
int clockd_fine_slow_(clockid_t id, struct timespec *ts, const struct clockd_page **cache);

#ifdef CLOCKD_INLINE_READS
/*
 * Inline reads. clockd_get_jiffies_64(), clockd_jiffies() and
 * clockd_clock_gettime() of a constant CLOCKD_MONOTONIC_COARSE or
 * CLOCKD_REALTIME_COARSE are a latch read of the mapped page in the
 * caller, as the kernel's vDSO coarse read but with no call: they return
 * the last tick's values while the daemon owning the page lives and has
 * raised no alarm. On x86-64 a constant fine id (CLOCKD_MONOTONIC,
 * CLOCKD_REALTIME, CLOCKD_MONOTONIC_RAW) is inline too, as the library's
 * TSC fast path (CLOCKD_INLINE_FINE). The first read in each file, and every read the page
 * cannot serve (none mapped yet, its daemon gone or alarmed), calls the
 * library, which also tells the file where the page is; results, errors
 * and errno are the library's. The page layout they read is the public,
 * versioned ABI of <clockd/page.h>, and a page a daemon replaced stays
 * mapped, so a cached pointer never dangles.
 */
static const struct clockd_page *clockd_page_cache_ __attribute__((__unused__));

/* The daemon owning @pg is alive and has raised no alarm (page.h). */
static __inline__ __attribute__((__always_inline__)) int clockd_page_live_(const struct clockd_page *pg)
{
	uint32_t w = __atomic_load_n((const uint32_t *)(const void *)pg->writer_lock, __ATOMIC_RELAXED);

	return (w & CLOCKD_PAGE_OWNER_TID_MASK) != 0 && !(w & CLOCKD_PAGE_OWNER_DIED) &&
	       __atomic_load_n(&pg->alarm, __ATOMIC_RELAXED) == 0;
}

static __inline__ __attribute__((__always_inline__)) uint64_t clockd_get_jiffies_64_inline_(void)
{
	const struct clockd_page *pg = __atomic_load_n(&clockd_page_cache_, __ATOMIC_ACQUIRE);
	uint64_t j;
	uint32_t seq;

	if (__builtin_expect(pg != 0, 1)) {
		do
			j = __atomic_load_n(&clockd_page_read_begin(pg, &seq)->jiffies_64, __ATOMIC_RELAXED);
		while (clockd_page_read_retry(pg, seq));
		if (__builtin_expect(clockd_page_live_(pg), 1))
			return j;
	}
	return clockd_jiffies_slow_(&clockd_page_cache_);
}

static __inline__ __attribute__((__always_inline__)) int clockd_coarse_inline_(clockid_t id, struct timespec *ts)
{
	const struct clockd_page *pg = __atomic_load_n(&clockd_page_cache_, __ATOMIC_ACQUIRE);
	const struct clockd_page_data *d;
	int64_t sec;
	uint32_t nsec, seq;

	if (__builtin_expect(pg != 0 && ts != 0, 1)) {
		do {
			d = clockd_page_read_begin(pg, &seq);
			if (id == CLOCKD_MONOTONIC_COARSE) {
				sec = __atomic_load_n(&d->coarse_mono_sec, __ATOMIC_RELAXED);
				nsec = __atomic_load_n(&d->coarse_mono_nsec, __ATOMIC_RELAXED);
			} else {
				sec = __atomic_load_n(&d->xtime_sec, __ATOMIC_RELAXED);
				nsec = __atomic_load_n(&d->xtime_nsec, __ATOMIC_RELAXED);
			}
		} while (clockd_page_read_retry(pg, seq));
		if (__builtin_expect(clockd_page_live_(pg) && nsec < 1000000000u, 1)) {
			ts->tv_sec = (time_t)sec;
			ts->tv_nsec = (long)nsec;
			return 0;
		}
	}
	return clockd_coarse_slow_(id, ts, &clockd_page_cache_);
}

#if defined(__x86_64__)
/*
 * The fine clocks of a constant id on x86-64: the library's fast path
 * (clock.c, FINE_FAST) in the caller. The TSC is read first, ordered
 * (lfence; rdtsc), so the page's loads overlap it; a page of another
 * counter mode, a delta past the extrapolation bound or behind
 * cycle_last, or a time a second or more past the base goes to the
 * library, which reads it all again.
 */
#define CLOCKD_INLINE_FINE 1
static __inline__ __attribute__((__always_inline__)) int clockd_fine_inline_(clockid_t id, struct timespec *ts)
{
	const struct clockd_page *pg;
	const struct clockd_page_data *d;
	uint64_t cycles, last, maxc, ns;
	uint32_t seq, mult, shift, mode;
	int64_t sec;

	__builtin_ia32_lfence();
	cycles = __builtin_ia32_rdtsc();
	pg = __atomic_load_n(&clockd_page_cache_, __ATOMIC_ACQUIRE);
	if (__builtin_expect(pg != 0 && ts != 0 && clockd_page_live_(pg), 1)) {
		do {
			d = clockd_page_read_begin(pg, &seq);
			mode = __atomic_load_n(&d->vclock_mode, __ATOMIC_RELAXED);
			last = __atomic_load_n(&d->cycle_last, __ATOMIC_RELAXED);
			maxc = __atomic_load_n(&d->max_cycles, __ATOMIC_RELAXED);
			shift = __atomic_load_n(&d->shift, __ATOMIC_RELAXED);
			if (id == CLOCKD_MONOTONIC_RAW) {
				mult = __atomic_load_n(&d->raw_mult, __ATOMIC_RELAXED);
				sec = __atomic_load_n(&d->raw_sec, __ATOMIC_RELAXED);
				ns = __atomic_load_n(&d->raw_snsec, __ATOMIC_RELAXED);
			} else if (id == CLOCKD_REALTIME) {
				mult = __atomic_load_n(&d->mult, __ATOMIC_RELAXED);
				sec = __atomic_load_n(&d->real_sec, __ATOMIC_RELAXED);
				ns = __atomic_load_n(&d->real_snsec, __ATOMIC_RELAXED);
			} else {
				mult = __atomic_load_n(&d->mult, __ATOMIC_RELAXED);
				sec = __atomic_load_n(&d->mono_sec, __ATOMIC_RELAXED);
				ns = __atomic_load_n(&d->mono_snsec, __ATOMIC_RELAXED);
			}
		} while (clockd_page_read_retry(pg, seq));
		if (__builtin_expect(mode == CLOCKD_VCLOCK_TSC && cycles - last <= maxc, 1)) {
			ns = (ns + (cycles - last) * mult) >> (shift & 63);
			if (__builtin_expect(ns < 1000000000u, 1)) {
				ts->tv_sec = (time_t)sec;
				ts->tv_nsec = (long)ns;
				return 0;
			}
		}
	}
	return clockd_fine_slow_(id, ts, &clockd_page_cache_);
}
#define CLOCKD_FINE_INLINE_ID_(id)                                                                  \
	(__builtin_constant_p(id) &&                                                                \
	 ((id) == CLOCKD_MONOTONIC || (id) == CLOCKD_REALTIME || (id) == CLOCKD_MONOTONIC_RAW))
#else
#define CLOCKD_FINE_INLINE_ID_(id) 0
#define clockd_fine_inline_(id, ts) (clockd_clock_gettime)((id), (ts))
#endif

/* In C only: a C++ caller may name the functions ::clockd_clock_gettime,
 * which a function-like macro would break; it calls the library. */
#ifndef __cplusplus
#define clockd_get_jiffies_64() clockd_get_jiffies_64_inline_()
#define clockd_jiffies() ((uint32_t)clockd_get_jiffies_64_inline_())
/* Only a constant coarse id is inline; (clockd_clock_gettime) is the
 * library's function. */
#define clockd_clock_gettime(id, ts)                                                               \
	(__builtin_constant_p(id) && ((id) == CLOCKD_MONOTONIC_COARSE || (id) == CLOCKD_REALTIME_COARSE) \
		 ? clockd_coarse_inline_((id), (ts))                                                 \
		 : CLOCKD_FINE_INLINE_ID_(id) ? clockd_fine_inline_((id), (ts))                      \
					      : (clockd_clock_gettime)((id), (ts)))
#endif /* !__cplusplus */
#endif /* CLOCKD_INLINE_READS */

#ifdef __cplusplus
}
#endif

#endif /* CLOCKD_CLOCKD_H */
