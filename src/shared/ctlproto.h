/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The control-socket protocol: the messages a client and clockd exchange
 * over the control socket (Unix, SOCK_SEQPACKET: one message per datagram),
 * and their codec. Pure code: no I/O, no allocation, no global state; safe
 * from any thread.
 *
 * Wire format (version 1). Every integer is little-endian, of the width
 * shown; every message is a 16-byte header followed by a body of exactly the
 * size its type gives (no optional or trailing bytes).
 *
 *   header  off size  field
 *            0   4    magic    CTL_MAGIC 0x4c54434b ("KCTL" on the wire)
 *            4   2    version  CTL_VERSION (1)
 *            6   2    type     enum ctl_type
 *            8   4    len      the whole message, header included
 *           12   4    seq      the client's request number; a reply
 *                              carries the seq of the request it answers
 *
 * Bodies (offsets from the end of the header; the structs below have
 * exactly this layout, asserted in ctlproto.c):
 *
 *   type            body  fields (offset)
 *   client -> daemon
 *   HELLO      0x0001  12  min_version u16 (0), max_version u16 (2),
 *                          flags u32 (4), ncpus_wanted u32 (8)
 *   ARM        0x0002  32  timer_id (0), cpu (4), clock (8), flags (12)
 *                          u32; expires u64 (16), period u64 (24)
 *   CANCEL     0x0003   8  timer_id u32 (0), pad u32 (4)
 *   STATS      0x0004   0
 *   BYE        0x0005   0
 *   CPU_STATS  0x0006   8  index u32 (0), pad u32 (4)
 *   CLIENT_STATS 0x0007 8  index u32 (0), pad u32 (4)
 *   RESERVE    0x0008   8  count i32 (0), pad u32 (4)
 *   daemon -> client (CTL_REPLY set)
 *   HELLO_ACK  0x8001  20  version u16 (0), pad u16 (2), ncpus (4),
 *                          ring_slots (8), max_timers (12),
 *                          max_msgs_per_sec (16) u32
 *   OK         0x8002   8  timer_id u32 (0), pad u32 (4)
 *   ERROR      0x8003  72  errno_code i32 (0), ref_type u32 (4),
 *                          why char[64] (8)
 *   STATS_REPLY 0x8004 32  pending (0), fired (8), overruns (16),
 *                          dropped (24) u64
 *   CPU_STATS_REPLY    72  cpu u32 (0), clients u32 (4);
 *              0x8006      pending_jiffies (8), pending_ns (16),
 *                          fired (24), overruns (32),
 *                          next_expiry_ns (40), late_p50_ns (48),
 *                          late_p99_ns (56), late_max_ns (64) u64
 *   CLIENT_STATS_REPLY 40  pid u32 (0), uid u32 (4); pending (8),
 *              0x8007      fired (16), overruns (24), dropped (32) u64
 *
 * CPU_STATS and CLIENT_STATS ask for the index-th timer base or client
 * (from 0; ERROR ENOENT past the last): a monitoring client (clockctl
 * timers) sends them without HELLO.
 *
 * RESERVE (after HELLO) sets count timer ids aside for the client under
 * max_timers_per_user (count > 0), or gives back -count of them: OK, or
 * ERROR EAGAIN when its user has no count left. The client's ARMs marked
 * CTL_ARM_RESERVED are then pending on its reserved ids, as far as it has
 * them, and are not refused for the quota. libclockd reserves at
 * clockd_timer_create() (in chunks), where POSIX has EAGAIN.
 *
 * What the decoder refuses, and with which error (a negative errno):
 *
 *   check                                                    error
 *   more than CTL_MSG_MAX bytes                              -EMSGSIZE
 *   shorter than the header; magic; version != 1;
 *   header len != bytes received; unknown type;
 *   len != the size of the type                               -EPROTO
 *   HELLO: min_version 0 or > max_version; flags != 0;
 *          ncpus_wanted > lim->ncpus (0 = all CPUs)           -EINVAL
 *   HELLO: [min_version, max_version] does not hold 1         -EPROTO
 *   ARM:   timer_id >= lim->max_timers; cpu >= lim->ncpus;
 *          clock not a CTL_CLOCK_*; flags outside
 *          CTL_ARM_FLAGS;
 *          ns clocks: expires or period > INT64_MAX;
 *          period 0 with PERIODIC, != 0 without it,
 *          < CTL_MIN_PERIOD_NS with PERIODIC on a ns clock    -EINVAL
 *   CANCEL: timer_id >= lim->max_timers; pad != 0             -EINVAL
 *   CPU_STATS, CLIENT_STATS: pad != 0                         -EINVAL
 *   RESERVE: count 0 or beyond +-CTL_RESERVE_MAX; pad != 0    -EINVAL
 *   HELLO_ACK: version != 1                                   -EPROTO
 *   HELLO_ACK: pad != 0; ncpus, ring_slots, max_timers or
 *          max_msgs_per_sec 0                                 -EINVAL
 *   OK:    timer_id >= lim->max_timers; pad != 0              -EINVAL
 *   ERROR: errno_code not in 1..CTL_ERRNO_MAX; ref_type not 0
 *          (unknown) or a client -> daemon type; why with no
 *          NUL, a byte outside printable ASCII before the NUL,
 *          or a byte other than 0 after it                    -EINVAL
 *   STATS, BYE, STATS_REPLY, CPU_STATS_REPLY,
 *   CLIENT_STATS_REPLY: nothing beyond the length.
 *
 * Relative expiries of 0 are accepted (due at once). Every valid message
 * has one encoding: pads are 0 and ERROR.why is zero-filled after its NUL,
 * so decoding then encoding an accepted buffer gives the same bytes.
 *
 * Versioning: a future version keeps the header and HELLO as they are, and
 * HELLO is always sent with header version 1, so a daemon of any version
 * can read it and answer with the version both speak (HELLO_ACK.version).
 * The version is checked on every message, not only HELLO.
 */
#ifndef CLOCKD_SHARED_CTLPROTO_H
#define CLOCKD_SHARED_CTLPROTO_H

#include <stddef.h>
#include <stdint.h>

#define CTL_MAGIC 0x4c54434bu /* bytes 'K' 'C' 'T' 'L' little-endian */
#define CTL_VERSION 1
#define CTL_HDR_SIZE 16
/* The largest datagram a peer may send: a receive buffer of this size (and
 * MSG_TRUNC) is enough. Room is left above the largest message of version
 * 1 (ERROR and CPU_STATS_REPLY, 88 bytes) so that a wrong length is told apart (-EPROTO) from
 * an oversized datagram (-EMSGSIZE). */
#define CTL_MSG_MAX 128
#define CTL_WHY_MAX 64          /* ERROR.why, its NUL included */
#define CTL_ERRNO_MAX 4095      /* the kernel's MAX_ERRNO */
#define CTL_MIN_PERIOD_NS 1000u /* the shortest period of a ns timer */

/* Replies (daemon -> client) have this bit in their type; requests do not. */
#define CTL_REPLY 0x8000u

enum ctl_type {
	CTL_HELLO = 0x0001,
	CTL_ARM = 0x0002,
	CTL_CANCEL = 0x0003,
	CTL_STATS = 0x0004,
	CTL_BYE = 0x0005,
	CTL_CPU_STATS = 0x0006,
	CTL_CLIENT_STATS = 0x0007,
	CTL_RESERVE = 0x0008,
	CTL_HELLO_ACK = CTL_REPLY | 0x0001,
	CTL_OK = CTL_REPLY | 0x0002,
	CTL_ERROR = CTL_REPLY | 0x0003,
	CTL_STATS_REPLY = CTL_REPLY | 0x0004,
	CTL_CPU_STATS_REPLY = CTL_REPLY | 0x0006,
	CTL_CLIENT_STATS_REPLY = CTL_REPLY | 0x0007,
};

/* ARM.clock: the unit of expires and period. */
enum ctl_clock {
	CTL_CLOCK_JIFFIES = 0,   /* jiffies_64 of the time page */
	CTL_CLOCK_MONOTONIC = 1, /* ns of CLOCKD_MONOTONIC */
	CTL_CLOCK_REALTIME = 2,  /* ns of CLOCKD_REALTIME */
};

/* ARM.flags */
#define CTL_ARM_ABSTIME 0x1u  /* expires is a time of the clock, else a delay */
#define CTL_ARM_PERIODIC 0x2u /* re-arm every period after each expiry */
/* A reconnecting client arms again what it had pending under the
 * previous daemon: see max_timers_per_user in clockd.conf(5). */
#define CTL_ARM_REARM 0x4u
/* Pending on one of the client's reserved ids (RESERVE) while it has one
 * free; otherwise counted as any ARM. */
#define CTL_ARM_RESERVED 0x8u
#define CTL_ARM_FLAGS (CTL_ARM_ABSTIME | CTL_ARM_PERIODIC | CTL_ARM_REARM | CTL_ARM_RESERVED)
#define CTL_RESERVE_MAX (1 << 24) /* the largest client_max_timers */

/* Bodies: host-order values, laid out as on the wire (see the table). */
struct ctl_hello {
	uint16_t min_version, max_version;
	uint32_t flags;        /* none defined: 0 */
	uint32_t ncpus_wanted; /* CPUs to get a delivery ring for; 0: all */
};

struct ctl_arm {
	uint32_t timer_id; /* the client's name for the timer, < its quota */
	uint32_t cpu;      /* the CPU the timer expires on */
	uint32_t clock;    /* enum ctl_clock */
	uint32_t flags;    /* CTL_ARM_* */
	uint64_t expires;  /* jiffies or ns (see clock and ABSTIME) */
	uint64_t period;   /* jiffies or ns; 0 unless PERIODIC */
};

struct ctl_cancel {
	uint32_t timer_id;
	uint32_t pad;
};

struct ctl_reserve {
	int32_t count; /* > 0: reserve; < 0: give back */
	uint32_t pad;
};

struct ctl_hello_ack {
	uint16_t version; /* the version both speak */
	uint16_t pad;
	uint32_t ncpus;   /* CPUs the daemon runs timers on (cpu < ncpus) */
	uint32_t ring_slots;
	uint32_t max_timers;       /* this client's quota: timer_id < it */
	uint32_t max_msgs_per_sec; /* this client's message rate quota */
};

struct ctl_ok {
	uint32_t timer_id; /* of the ARM or CANCEL it answers */
	uint32_t pad;
};

struct ctl_error {
	int32_t errno_code;     /* a positive errno */
	uint32_t ref_type;      /* type of the refused request; 0 if unknown */
	char why[CTL_WHY_MAX];  /* printable ASCII, NUL-terminated */
};

struct ctl_stats_reply {
	uint64_t pending, fired, overruns, dropped;
};

/* CPU_STATS and CLIENT_STATS */
struct ctl_index {
	uint32_t index; /* from 0 */
	uint32_t pad;
};

/* A timer base's counters (the daemon's struct tb_cpu_stats). */
struct ctl_cpu_stats_reply {
	uint32_t cpu, clients;
	uint64_t pending_jiffies, pending_ns;
	uint64_t fired, overruns;
	uint64_t next_expiry_ns; /* kernel CLOCK_MONOTONIC; UINT64_MAX: none */
	uint64_t late_p50_ns, late_p99_ns, late_max_ns;
};

/* A client's identity (SO_PEERCRED) and counters. */
struct ctl_client_stats_reply {
	uint32_t pid, uid;
	uint64_t pending, fired, overruns, dropped;
};

/* One decoded message: the header fields the codec does not derive (magic
 * and len are) and the body of the type. */
struct ctl_msg {
	uint16_t version; /* CTL_VERSION */
	uint16_t type;    /* enum ctl_type */
	uint32_t seq;
	union {
		struct ctl_hello hello;
		struct ctl_arm arm;
		struct ctl_cancel cancel;
		struct ctl_reserve reserve;
		struct ctl_hello_ack hello_ack;
		struct ctl_ok ok;
		struct ctl_error error;
		struct ctl_stats_reply stats_reply;
		struct ctl_index index; /* CPU_STATS, CLIENT_STATS */
		struct ctl_cpu_stats_reply cpu_stats_reply;
		struct ctl_client_stats_reply client_stats_reply;
	} u; /* STATS and BYE have no body */
};

/* What the decoder checks ids against: the daemon's CPU count and this
 * client's timer quota (the client: the values of its HELLO_ACK). */
struct ctl_limits {
	uint32_t ncpus, max_timers;
};

/*
 * Decode the datagram @buf of @len bytes into *@out. @lim may be NULL only
 * where the limits are not known yet (a client reading the HELLO_ACK): then
 * the checks against them are skipped. Returns 0, or a negative errno (see
 * the table above) with a one-line reason naming the field and its value
 * (e.g. "ARM.cpu 7 >= 2 CPUs") in @why (@whylen bytes, always
 * NUL-terminated; @why may be NULL). *@out is zeroed, then filled only on
 * success. Never reads outside buf[0..len).
 */
int ctl_decode(const void *buf, size_t len, const struct ctl_limits *lim, struct ctl_msg *out,
	       char *why, size_t whylen);

/*
 * The type and seq the header of @buf (@len bytes) claims, unchecked: for
 * answering a message ctl_decode() refused. Both 0 when @len is shorter
 * than a header.
 */
void ctl_peek(const void *buf, size_t len, uint16_t *type, uint32_t *seq);

/*
 * Encode *@m into @buf (@len bytes): returns the bytes written (the message
 * size), or 0, with nothing written, if @m is not a valid message (the
 * decoder's checks that need no limits; version must be CTL_VERSION) or
 * does not fit. ERROR.why is written up to its NUL and zero-filled.
 */
size_t ctl_encode(const struct ctl_msg *m, void *buf, size_t len);

/* Zero *@m and set its version, @type and @seq. */
void ctl_msg_init(struct ctl_msg *m, uint16_t type, uint32_t seq);

/* The whole size of a message of @type (header included), 0 if unknown. */
size_t ctl_msg_size(uint16_t type);

/* "HELLO", "ARM", ...; "unknown" for a type that is not one. */
const char *ctl_type_name(uint16_t type);

#endif
