/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The control protocol codec against its contract (src/shared/ctlproto.h):
 *  - the wire bytes of one message of every type, written out here by hand
 *    from the header's table (little-endian, offsets, "KCTL"): encode gives
 *    exactly them, decode gives back the message;
 *  - 10^4 random valid messages of every type round-trip;
 *  - every range check, on the wire bytes: the first value out of range is
 *    refused with the documented errno and a reason naming the field and
 *    the value, the last value in range is accepted (limits: 4 CPUs, quota
 *    100 timers); without limits, the checks against them are skipped;
 *  - every truncation (0..len-1 bytes) of every message is refused
 *    (-EPROTO), so are one byte more (with and without the header's len
 *    agreeing) and more than CTL_MSG_MAX bytes (-EMSGSIZE);
 *  - the reason never overruns a short buffer;
 *  - encode writes nothing for a buffer too small or an invalid message, and
 *    zero-fills ERROR.why after its NUL;
 *  - 10^6 seeded random buffers (random bytes, valid headers with random
 *    bodies, valid messages with random bytes changed): no crash, only the
 *    documented errors, a reason for every refusal, and every accepted
 *    buffer re-encodes to the same bytes.
 * CTLPROTO_SEED=n in the environment replays another random sequence.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/ctlproto.h"
#include "tests/tap.h"
#include "tests/util.h"

#define NROUNDTRIP 10000
#define NRANDOM 1000000
#define H CTL_HDR_SIZE

/* Little-endian byte lists for the hand-written messages. */
#define L16(v) (unsigned char)((v) & 0xff), (unsigned char)(((v) >> 8) & 0xff)
#define L32(v) L16((v) & 0xffff), L16(((v) >> 16) & 0xffff)
#define L64(v) L32((uint64_t)(v) & 0xffffffffu), L32(((uint64_t)(v) >> 32) & 0xffffffffu)
#define HDR(type, len, seq) 'K', 'C', 'T', 'L', L16(1), L16(type), L32(len), L32(seq)

static const struct ctl_limits lim = { .ncpus = 4, .max_timers = 100 };

struct golden {
	struct ctl_msg m;
	unsigned char bytes[CTL_MSG_MAX];
	size_t len;
};

static const struct golden golden[] = {
	{ { 1, CTL_HELLO, 0x01020304, .u.hello = { 1, 3, 0, 2 } },
	  { HDR(0x0001, 28, 0x01020304), L16(1), L16(3), L32(0), L32(2) }, 28 },
	{ { 1, CTL_ARM, 5, .u.arm = { 17, 3, CTL_CLOCK_MONOTONIC, CTL_ARM_ABSTIME | CTL_ARM_PERIODIC,
				       0x0102030405060708u, 1000000 } },
	  { HDR(0x0002, 48, 5), L32(17), L32(3), L32(1), L32(3), L64(0x0102030405060708u), L64(1000000u) },
	  48 },
	{ { 1, CTL_CANCEL, 6, .u.cancel = { 99, 0 } }, { HDR(0x0003, 24, 6), L32(99), L32(0) }, 24 },
	{ { 1, CTL_STATS, 7 }, { HDR(0x0004, 16, 7) }, 16 },
	{ { 1, CTL_BYE, 0xffffffffu }, { HDR(0x0005, 16, 0xffffffffu) }, 16 },
	{ { 1, CTL_HELLO_ACK, 0x01020304, .u.hello_ack = { 1, 0, 4, 256, 100, 10000 } },
	  { HDR(0x8001, 36, 0x01020304), L16(1), L16(0), L32(4), L32(256), L32(100), L32(10000) }, 36 },
	{ { 1, CTL_OK, 5, .u.ok = { 17, 0 } }, { HDR(0x8002, 24, 5), L32(17), L32(0) }, 24 },
	{ { 1, CTL_ERROR, 5, .u.error = { EINVAL, CTL_ARM, "ARM.cpu 7 >= 4 CPUs" } },
	  { HDR(0x8003, 88, 5), L32(EINVAL), L32(2), 'A', 'R', 'M', '.', 'c', 'p', 'u', ' ', '7', ' ', '>',
	    '=', ' ', '4', ' ', 'C', 'P', 'U', 's' },
	  88 },
	{ { 1, CTL_STATS_REPLY, 8,
	    .u.stats_reply = { 0x1111111111111111u, 0x2222222222222222u, 3, 0xfedcba9876543210u } },
	  { HDR(0x8004, 48, 8), L64(0x1111111111111111u), L64(0x2222222222222222u), L64(3u),
	    L64(0xfedcba9876543210u) },
	  48 },
	{ { 1, CTL_CPU_STATS, 9, .u.index = { 3, 0 } }, { HDR(0x0006, 24, 9), L32(3), L32(0) }, 24 },
	{ { 1, CTL_CLIENT_STATS, 10, .u.index = { 0xfffffffeu, 0 } },
	  { HDR(0x0007, 24, 10), L32(0xfffffffeu), L32(0) }, 24 },
	{ { 1, CTL_CPU_STATS_REPLY, 9,
	    .u.cpu_stats_reply = { 63, 0x01020304u, 0x1111111111111111u, 2, 0x3333333333333333u, 4,
				   UINT64_MAX, 5000, 0x0102030405060708u, 0x8877665544332211u } },
	  { HDR(0x8006, 88, 9), L32(63), L32(0x01020304u), L64(0x1111111111111111u), L64(2u),
	    L64(0x3333333333333333u), L64(4u), L64(UINT64_MAX), L64(5000u), L64(0x0102030405060708u),
	    L64(0x8877665544332211u) },
	  88 },
	{ { 1, CTL_CLIENT_STATS_REPLY, 10,
	    .u.client_stats_reply = { 4242, 1000, 1000, 0x2222222222222222u, 7, 0xfedcba9876543210u } },
	  { HDR(0x8007, 56, 10), L32(4242), L32(1000), L64(1000u), L64(0x2222222222222222u), L64(7u),
	    L64(0xfedcba9876543210u) },
	  56 },
	{ { 1, CTL_RESERVE, 11, .u.reserve = { -3, 0 } }, { HDR(0x0008, 24, 11), L32(0xfffffffdu), L32(0) }, 24 },
};
#define NGOLDEN (sizeof(golden) / sizeof(golden[0]))

static const struct golden *golden_of(uint16_t type)
{
	for (size_t i = 0; i < NGOLDEN; i++)
		if (golden[i].m.type == type)
			return &golden[i];
	tap_bail("no golden message of type 0x%04x", type);
}

/* ---- random numbers (xorshift64*, seeded) ---- */

static uint64_t rng_state;

static uint64_t rnd(void)
{
	return tu_rng(&rng_state);
}

static uint64_t rnd_below(uint64_t n)
{
	return rnd() % n;
}

/* ---- helpers ---- */

static bool encodes_to(const struct ctl_msg *m, const unsigned char *want, size_t len)
{
	unsigned char buf[CTL_MSG_MAX];

	return ctl_encode(m, buf, sizeof(buf)) == len && memcmp(buf, want, len) == 0;
}

/* Decode @len bytes from a heap copy of exactly that size (so that an
 * over-read is a read outside an allocation, which ASan reports). */
static int decode_exact(const unsigned char *p, size_t len, const struct ctl_limits *l,
			struct ctl_msg *out, char *why, size_t whylen)
{
	unsigned char *copy = len ? malloc(len) : NULL;
	int rc;

	if (len && !copy)
		tap_bail("out of memory");
	if (len)
		memcpy(copy, p, len);
	rc = ctl_decode(copy, len, l, out, why, whylen);
	free(copy);
	return rc;
}

static void poke(unsigned char *p, size_t off, size_t size, uint64_t v)
{
	for (size_t i = 0; i < size; i++)
		p[off + i] = (unsigned char)(v >> (8 * i));
}

/* ---- the hand-written messages ---- */

static void test_golden(void)
{
	for (size_t i = 0; i < NGOLDEN; i++) {
		const struct golden *g = &golden[i];
		struct ctl_msg out;
		char why[128];
		int rc = ctl_decode(g->bytes, g->len, &lim, &out, why, sizeof(why));
		bool enc = encodes_to(&g->m, g->bytes, g->len);

		tap_ok(enc && rc == 0 && memcmp(&out, &g->m, sizeof(out)) == 0 && g->len == ctl_msg_size(g->m.type),
		       "%s: encodes to its %zu wire bytes and decodes back (encode %s, decode %d %s)",
		       ctl_type_name(g->m.type), g->len, enc ? "ok" : "differs", rc, rc ? why : "");
	}
}

/* ---- random valid messages ---- */

static void random_why(char *why)
{
	size_t n = rnd_below(CTL_WHY_MAX);

	memset(why, 0, CTL_WHY_MAX);
	for (size_t i = 0; i < n; i++)
		why[i] = (char)(0x20 + rnd_below(0x7f - 0x20));
}

static void random_arm(struct ctl_arm *a)
{
	bool ns;

	a->timer_id = (uint32_t)rnd_below(lim.max_timers);
	a->cpu = (uint32_t)rnd_below(lim.ncpus);
	a->clock = (uint32_t)rnd_below(3);
	a->flags = (uint32_t)rnd_below(4);
	ns = a->clock != CTL_CLOCK_JIFFIES;
	a->expires = ns ? rnd() >> 1 : rnd();
	if (!(a->flags & CTL_ARM_PERIODIC))
		a->period = 0;
	else if (ns)
		a->period = CTL_MIN_PERIOD_NS + rnd_below((uint64_t)INT64_MAX - CTL_MIN_PERIOD_NS + 1);
	else
		a->period = 1 + rnd_below(UINT64_MAX);
}

/* A valid message of @type with random fields over their whole range. */
static void random_valid(uint16_t type, struct ctl_msg *m)
{
	ctl_msg_init(m, type, (uint32_t)rnd());
	switch (type) {
	case CTL_HELLO:
		m->u.hello.min_version = 1;
		m->u.hello.max_version = (uint16_t)(1 + rnd_below(UINT16_MAX));
		m->u.hello.ncpus_wanted = (uint32_t)rnd_below(lim.ncpus + 1);
		break;
	case CTL_ARM: random_arm(&m->u.arm); break;
	case CTL_CANCEL: m->u.cancel.timer_id = (uint32_t)rnd_below(lim.max_timers); break;
	case CTL_HELLO_ACK:
		m->u.hello_ack.version = 1;
		m->u.hello_ack.ncpus = (uint32_t)(1 + rnd_below(UINT32_MAX));
		m->u.hello_ack.ring_slots = (uint32_t)(1 + rnd_below(UINT32_MAX));
		m->u.hello_ack.max_timers = (uint32_t)(1 + rnd_below(UINT32_MAX));
		m->u.hello_ack.max_msgs_per_sec = (uint32_t)(1 + rnd_below(UINT32_MAX));
		break;
	case CTL_OK: m->u.ok.timer_id = (uint32_t)rnd_below(lim.max_timers); break;
	case CTL_ERROR:
		m->u.error.errno_code = (int32_t)(1 + rnd_below(CTL_ERRNO_MAX));
		m->u.error.ref_type = (uint32_t)rnd_below(CTL_RESERVE + 1);
		random_why(m->u.error.why);
		break;
	case CTL_STATS_REPLY:
		m->u.stats_reply.pending = rnd();
		m->u.stats_reply.fired = rnd();
		m->u.stats_reply.overruns = rnd();
		m->u.stats_reply.dropped = rnd();
		break;
	case CTL_CPU_STATS:
	case CTL_CLIENT_STATS: m->u.index.index = (uint32_t)rnd(); break;
	case CTL_RESERVE:
		m->u.reserve.count = (int32_t)(1 + rnd_below(CTL_RESERVE_MAX)) * (rnd_below(2) ? 1 : -1);
		break;
	case CTL_CPU_STATS_REPLY: {
		struct ctl_cpu_stats_reply *c = &m->u.cpu_stats_reply;

		c->cpu = (uint32_t)rnd();
		c->clients = (uint32_t)rnd();
		c->pending_jiffies = rnd();
		c->pending_ns = rnd();
		c->fired = rnd();
		c->overruns = rnd();
		c->next_expiry_ns = rnd();
		c->late_p50_ns = rnd();
		c->late_p99_ns = rnd();
		c->late_max_ns = rnd();
		break;
	}
	case CTL_CLIENT_STATS_REPLY: {
		struct ctl_client_stats_reply *c = &m->u.client_stats_reply;

		c->pid = (uint32_t)rnd();
		c->uid = (uint32_t)rnd();
		c->pending = rnd();
		c->fired = rnd();
		c->overruns = rnd();
		c->dropped = rnd();
		break;
	}
	default: break; /* STATS, BYE: no body */
	}
}

static void test_roundtrip(void)
{
	for (size_t i = 0; i < NGOLDEN; i++) {
		uint16_t type = golden[i].m.type;
		size_t bad = 0;

		for (int k = 0; k < NROUNDTRIP; k++) {
			unsigned char buf[CTL_MSG_MAX];
			struct ctl_msg m, out;
			size_t n;

			random_valid(type, &m);
			n = ctl_encode(&m, buf, sizeof(buf));
			if (n != ctl_msg_size(type) || ctl_decode(buf, n, &lim, &out, NULL, 0) != 0 ||
			    memcmp(&out, &m, sizeof(m)) != 0 || !encodes_to(&out, buf, n))
				bad++;
		}
		tap_ok(bad == 0, "%s: %d random valid messages round-trip (%zu failed)", ctl_type_name(type),
		       NROUNDTRIP, bad);
	}
}

/* ---- range checks, on the wire ---- */

struct pokes {
	uint8_t off, size;
	uint64_t v;
};

struct check_case {
	uint16_t type;    /* the golden message changed */
	struct pokes p[2];
	int err;          /* 0: accepted */
	const char *want; /* in the reason: the field and the value */
};

#define P(o, s, v) { (o), (s), (v) }
#define NOPOKE { 0, 0, 0 }
#define I64MAX ((uint64_t)INT64_MAX)

static const struct check_case cases[] = {
	/* header, on ARM */
	{ CTL_ARM, { P(0, 4, 0x4c54434cu), NOPOKE }, EPROTO, "magic 0x4c54434c" },
	{ CTL_ARM, { P(0, 4, 0x4b43544cu), NOPOKE }, EPROTO, "magic 0x4b43544c" },
	{ CTL_ARM, { P(4, 2, 0), NOPOKE }, EPROTO, "version 0" },
	{ CTL_ARM, { P(4, 2, 2), NOPOKE }, EPROTO, "version 2" },
	{ CTL_ARM, { P(6, 2, 0), NOPOKE }, EPROTO, "type 0x0000" },
	{ CTL_ARM, { P(6, 2, 9), NOPOKE }, EPROTO, "type 0x0009" },
	{ CTL_ARM, { P(6, 2, CTL_CPU_STATS), NOPOKE }, EPROTO, "CPU_STATS of 48 bytes" },
	{ CTL_ARM, { P(6, 2, 0x8008), NOPOKE }, EPROTO, "type 0x8008" },
	{ CTL_ARM, { P(6, 2, 0x8000), NOPOKE }, EPROTO, "type 0x8000" },
	{ CTL_ARM, { P(6, 2, 0x8005), NOPOKE }, EPROTO, "type 0x8005" },
	{ CTL_ARM, { P(6, 2, 0xffff), NOPOKE }, EPROTO, "type 0xffff" },
	{ CTL_ARM, { P(6, 2, CTL_CANCEL), NOPOKE }, EPROTO, "CANCEL of 48 bytes" },
	{ CTL_ARM, { P(6, 2, CTL_STATS_REPLY), NOPOKE }, 0, NULL }, /* same size, any content */
	{ CTL_ARM, { P(8, 4, 47), NOPOKE }, EPROTO, "header len 47" },
	{ CTL_ARM, { P(8, 4, 49), NOPOKE }, EPROTO, "header len 49" },
	{ CTL_ARM, { P(8, 4, 0), NOPOKE }, EPROTO, "header len 0" },
	{ CTL_ARM, { P(8, 4, 0xffffffffu), NOPOKE }, EPROTO, "header len 4294967295" },
	{ CTL_ARM, { P(12, 4, 0), NOPOKE }, 0, NULL }, /* seq: any */
	/* HELLO */
	{ CTL_HELLO, { P(H, 2, 0), NOPOKE }, EINVAL, "HELLO.min_version 0" },
	{ CTL_HELLO, { P(H, 2, 4), NOPOKE }, EINVAL, "HELLO.min_version 4 > max_version 3" },
	{ CTL_HELLO, { P(H, 2, 2), NOPOKE }, EPROTO, "HELLO.min_version..max_version 2..3" },
	{ CTL_HELLO, { P(H, 2, 2), P(H + 2, 2, 0xffff) }, EPROTO, "2..65535" },
	{ CTL_HELLO, { P(H + 2, 2, 1), NOPOKE }, 0, NULL },
	{ CTL_HELLO, { P(H + 2, 2, 0xffff), NOPOKE }, 0, NULL },
	{ CTL_HELLO, { P(H + 4, 4, 1), NOPOKE }, EINVAL, "HELLO.flags 0x1," },
	{ CTL_HELLO, { P(H + 4, 4, 0x80000000u), NOPOKE }, EINVAL, "HELLO.flags 0x80000000" },
	{ CTL_HELLO, { P(H + 8, 4, 0), NOPOKE }, 0, NULL },
	{ CTL_HELLO, { P(H + 8, 4, 4), NOPOKE }, 0, NULL },
	{ CTL_HELLO, { P(H + 8, 4, 5), NOPOKE }, EINVAL, "HELLO.ncpus_wanted 5 > 4 CPUs" },
	{ CTL_HELLO, { P(H + 8, 4, 0xffffffffu), NOPOKE }, EINVAL, "HELLO.ncpus_wanted 4294967295" },
	/* ARM (golden: MONOTONIC, ABSTIME | PERIODIC, period 1e6 ns) */
	{ CTL_ARM, { P(H, 4, 99), NOPOKE }, 0, NULL },
	{ CTL_ARM, { P(H, 4, 100), NOPOKE }, EINVAL, "ARM.timer_id 100 >= quota 100" },
	{ CTL_ARM, { P(H, 4, 0xffffffffu), NOPOKE }, EINVAL, "ARM.timer_id 4294967295" },
	{ CTL_ARM, { P(H + 4, 4, 0), NOPOKE }, 0, NULL },
	{ CTL_ARM, { P(H + 4, 4, 4), NOPOKE }, EINVAL, "ARM.cpu 4 >= 4 CPUs" },
	{ CTL_ARM, { P(H + 4, 4, 0xffffffffu), NOPOKE }, EINVAL, "ARM.cpu 4294967295" },
	{ CTL_ARM, { P(H + 8, 4, CTL_CLOCK_JIFFIES), NOPOKE }, 0, NULL },
	{ CTL_ARM, { P(H + 8, 4, CTL_CLOCK_REALTIME), NOPOKE }, 0, NULL },
	{ CTL_ARM, { P(H + 8, 4, 3), NOPOKE }, EINVAL, "ARM.clock 3" },
	{ CTL_ARM, { P(H + 8, 4, 0xffffffffu), NOPOKE }, EINVAL, "ARM.clock 4294967295" },
	{ CTL_ARM, { P(H + 12, 4, 0x1f), NOPOKE }, EINVAL, "ARM.flags 0x1f" },
	{ CTL_ARM, { P(H + 12, 4, 0x80000003u), NOPOKE }, EINVAL, "ARM.flags 0x80000003" },
	{ CTL_ARM, { P(H + 12, 4, CTL_ARM_ABSTIME), NOPOKE }, EINVAL, "ARM.period 1000000 without PERIODIC" },
	{ CTL_ARM, { P(H + 12, 4, 0), NOPOKE }, EINVAL, "ARM.period 1000000 without PERIODIC" },
	{ CTL_ARM, { P(H + 12, 4, CTL_ARM_ABSTIME), P(H + 24, 8, 0) }, 0, NULL },
	{ CTL_ARM, { P(H + 12, 4, 0), P(H + 24, 8, 0) }, 0, NULL },
	{ CTL_ARM, { P(H + 16, 8, 0), NOPOKE }, 0, NULL },
	{ CTL_ARM, { P(H + 16, 8, I64MAX), NOPOKE }, 0, NULL },
	{ CTL_ARM, { P(H + 16, 8, I64MAX + 1), NOPOKE }, EINVAL, "ARM.expires 9223372036854775808 ns" },
	{ CTL_ARM, { P(H + 16, 8, UINT64_MAX), NOPOKE }, EINVAL, "ARM.expires 18446744073709551615" },
	{ CTL_ARM, { P(H + 16, 8, UINT64_MAX), P(H + 8, 4, CTL_CLOCK_REALTIME) }, EINVAL, "ARM.expires" },
	{ CTL_ARM, { P(H + 16, 8, UINT64_MAX), P(H + 8, 4, CTL_CLOCK_JIFFIES) }, 0, NULL },
	{ CTL_ARM, { P(H + 24, 8, 0), NOPOKE }, EINVAL, "ARM.period 0 with PERIODIC" },
	{ CTL_ARM, { P(H + 24, 8, 999), NOPOKE }, EINVAL, "ARM.period 999 ns < 1000" },
	{ CTL_ARM, { P(H + 24, 8, 1000), NOPOKE }, 0, NULL },
	{ CTL_ARM, { P(H + 24, 8, I64MAX), NOPOKE }, 0, NULL },
	{ CTL_ARM, { P(H + 24, 8, I64MAX + 1), NOPOKE }, EINVAL, "ARM.period 9223372036854775808 ns" },
	{ CTL_ARM, { P(H + 24, 8, 1), P(H + 8, 4, CTL_CLOCK_JIFFIES) }, 0, NULL },
	{ CTL_ARM, { P(H + 24, 8, UINT64_MAX), P(H + 8, 4, CTL_CLOCK_JIFFIES) }, 0, NULL },
	{ CTL_ARM, { P(H + 24, 8, 0), P(H + 8, 4, CTL_CLOCK_JIFFIES) }, EINVAL, "ARM.period 0 with" },
	/* CANCEL */
	{ CTL_CANCEL, { P(H, 4, 100), NOPOKE }, EINVAL, "CANCEL.timer_id 100 >= quota 100" },
	{ CTL_CANCEL, { P(H, 4, 0), NOPOKE }, 0, NULL },
	{ CTL_CANCEL, { P(H + 4, 4, 1), NOPOKE }, EINVAL, "CANCEL.pad 1," },
	{ CTL_CANCEL, { P(H + 4, 4, 0x80000000u), NOPOKE }, EINVAL, "CANCEL.pad 2147483648" },
	/* CPU_STATS, CLIENT_STATS: any index, pad 0 */
	{ CTL_CPU_STATS, { P(H, 4, 0), NOPOKE }, 0, NULL },
	{ CTL_CPU_STATS, { P(H, 4, 0xffffffffu), NOPOKE }, 0, NULL },
	{ CTL_CPU_STATS, { P(H + 4, 4, 1), NOPOKE }, EINVAL, "CPU_STATS.pad 1," },
	{ CTL_CPU_STATS, { P(H + 4, 4, 0xffffffffu), NOPOKE }, EINVAL, "CPU_STATS.pad 4294967295" },
	{ CTL_CLIENT_STATS, { P(H, 4, 0xffffffffu), NOPOKE }, 0, NULL },
	{ CTL_CLIENT_STATS, { P(H + 4, 4, 0x100), NOPOKE }, EINVAL, "CLIENT_STATS.pad 256," },
	/* the stats replies: any values */
	{ CTL_CPU_STATS_REPLY, { P(H, 4, 0xffffffffu), P(H + 64, 8, 0) }, 0, NULL },
	{ CTL_CLIENT_STATS_REPLY, { P(H, 4, 0), P(H + 32, 8, UINT64_MAX) }, 0, NULL },
	/* HELLO_ACK */
	{ CTL_HELLO_ACK, { P(H, 2, 0), NOPOKE }, EPROTO, "HELLO_ACK.version 0" },
	{ CTL_HELLO_ACK, { P(H, 2, 2), NOPOKE }, EPROTO, "HELLO_ACK.version 2" },
	{ CTL_HELLO_ACK, { P(H + 2, 2, 1), NOPOKE }, EINVAL, "HELLO_ACK.pad 1" },
	{ CTL_HELLO_ACK, { P(H + 4, 4, 0), NOPOKE }, EINVAL, "HELLO_ACK.ncpus 0" },
	{ CTL_HELLO_ACK, { P(H + 4, 4, 1), NOPOKE }, 0, NULL },
	{ CTL_HELLO_ACK, { P(H + 8, 4, 0), NOPOKE }, EINVAL, "HELLO_ACK.ring_slots 0" },
	{ CTL_HELLO_ACK, { P(H + 12, 4, 0), NOPOKE }, EINVAL, "HELLO_ACK.max_timers 0" },
	{ CTL_HELLO_ACK, { P(H + 16, 4, 0), NOPOKE }, EINVAL, "HELLO_ACK.max_msgs_per_sec 0" },
	{ CTL_HELLO_ACK, { P(H + 16, 4, 0xffffffffu), NOPOKE }, 0, NULL },
	/* OK */
	{ CTL_OK, { P(H, 4, 100), NOPOKE }, EINVAL, "OK.timer_id 100 >= quota 100" },
	{ CTL_OK, { P(H, 4, 99), NOPOKE }, 0, NULL },
	{ CTL_OK, { P(H + 4, 4, 7), NOPOKE }, EINVAL, "OK.pad 7," },
	/* ERROR */
	{ CTL_ERROR, { P(H, 4, 0), NOPOKE }, EINVAL, "ERROR.errno_code 0 " },
	{ CTL_ERROR, { P(H, 4, 0xffffffffu), NOPOKE }, EINVAL, "ERROR.errno_code -1 " },
	{ CTL_ERROR, { P(H, 4, 4096), NOPOKE }, EINVAL, "ERROR.errno_code 4096 " },
	{ CTL_ERROR, { P(H, 4, 4095), NOPOKE }, 0, NULL },
	{ CTL_ERROR, { P(H, 4, 1), NOPOKE }, 0, NULL },
	{ CTL_ERROR, { P(H + 4, 4, 0), NOPOKE }, 0, NULL },
	{ CTL_ERROR, { P(H + 4, 4, CTL_BYE), NOPOKE }, 0, NULL },
	{ CTL_ERROR, { P(H + 4, 4, CTL_CLIENT_STATS), NOPOKE }, 0, NULL },
	{ CTL_ERROR, { P(H + 4, 4, CTL_RESERVE), NOPOKE }, 0, NULL },
	{ CTL_ERROR, { P(H + 4, 4, 9), NOPOKE }, EINVAL, "ERROR.ref_type 0x9 " },
	{ CTL_RESERVE, { P(H, 4, 1), NOPOKE }, 0, NULL },
	{ CTL_RESERVE, { P(H, 4, 1u << 24), NOPOKE }, 0, NULL },
	{ CTL_RESERVE, { P(H, 4, (uint32_t)-(1 << 24)), NOPOKE }, 0, NULL },
	{ CTL_RESERVE, { P(H, 4, 0), NOPOKE }, EINVAL, "RESERVE.count 0 " },
	{ CTL_RESERVE, { P(H, 4, (1u << 24) + 1), NOPOKE }, EINVAL, "RESERVE.count 16777217 " },
	{ CTL_RESERVE, { P(H, 4, (uint32_t)-(1 << 24) - 1), NOPOKE }, EINVAL, "RESERVE.count -16777217 " },
	{ CTL_RESERVE, { P(H + 4, 4, 1), NOPOKE }, EINVAL, "RESERVE.pad 1," },
	{ CTL_ERROR, { P(H + 4, 4, CTL_CPU_STATS_REPLY), NOPOKE }, EINVAL, "ERROR.ref_type 0x8006 " },
	{ CTL_ERROR, { P(H + 4, 4, CTL_ERROR), NOPOKE }, EINVAL, "ERROR.ref_type 0x8003 " },
	{ CTL_ERROR, { P(H + 8, 1, 0x1b), NOPOKE }, EINVAL, "ERROR.why byte 0 is 0x1b" },
	{ CTL_ERROR, { P(H + 8 + 5, 1, 0x7f), NOPOKE }, EINVAL, "ERROR.why byte 5 is 0x7f" },
	{ CTL_ERROR, { P(H + 8 + 5, 1, 0x80), NOPOKE }, EINVAL, "ERROR.why byte 5 is 0x80" },
	{ CTL_ERROR, { P(H + 8 + 5, 1, 0x1f), NOPOKE }, EINVAL, "ERROR.why byte 5 is 0x1f" },
	{ CTL_ERROR, { P(H + 8 + 5, 1, 0x7e), NOPOKE }, 0, NULL },
	{ CTL_ERROR, { P(H + 8 + 5, 1, 0), NOPOKE }, EINVAL, "ERROR.why byte 6 after the NUL is 0x75" },
	{ CTL_ERROR, { P(H + 8 + 63, 1, 'x'), NOPOKE }, EINVAL, "ERROR.why byte 63 after the NUL is 0x78" },
	{ CTL_ERROR, { P(H + 8, 1, 0), P(H + 8 + 1, 8, 0) }, EINVAL, "ERROR.why byte 9 after the NUL" },
};
#define NCASES (sizeof(cases) / sizeof(cases[0]))

static void test_checks(void)
{
	for (size_t i = 0; i < NCASES; i++) {
		const struct check_case *c = &cases[i];
		const struct golden *g = golden_of(c->type);
		unsigned char buf[CTL_MSG_MAX];
		struct ctl_msg out;
		char why[128] = "";
		int rc;

		memcpy(buf, g->bytes, g->len);
		for (int k = 0; k < 2; k++)
			poke(buf, c->p[k].off, c->p[k].size, c->p[k].v);
		rc = decode_exact(buf, g->len, &lim, &out, why, sizeof(why));
		if (c->err)
			tap_ok(rc == -c->err && strstr(why, c->want) != NULL,
			       "%s with [%u] = %#" PRIx64 ": %s (want -%d \"%s\", got %d \"%s\")",
			       ctl_type_name(c->type), c->p[0].off, c->p[0].v, strerror(c->err), c->err,
			       c->want, rc, why);
		else
			tap_ok(rc == 0 && encodes_to(&out, buf, g->len),
			       "%s with [%u] = %#" PRIx64 ": accepted, re-encodes the same (got %d \"%s\")",
			       ctl_type_name(c->type), c->p[0].off, c->p[0].v, rc, why);
	}
}

/* A 63-character why is the longest; 64 without a NUL is refused. */
static void test_why_length(void)
{
	unsigned char buf[CTL_MSG_MAX];
	const struct golden *g = golden_of(CTL_ERROR);
	struct ctl_msg out;
	char why[128] = "";
	int rc;

	memcpy(buf, g->bytes, g->len);
	memset(buf + H + 8, 'w', CTL_WHY_MAX - 1);
	rc = ctl_decode(buf, g->len, &lim, &out, why, sizeof(why));
	tap_ok(rc == 0 && strlen(out.u.error.why) == CTL_WHY_MAX - 1 && encodes_to(&out, buf, g->len),
	       "ERROR.why of 63 characters accepted (%d %s)", rc, why);
	buf[H + 8 + CTL_WHY_MAX - 1] = 'w';
	rc = ctl_decode(buf, g->len, &lim, &out, why, sizeof(why));
	tap_ok(rc == -EINVAL && strstr(why, "ERROR.why has no NUL"), "ERROR.why of 64 bytes, no NUL: %d \"%s\"",
	       rc, why);
}

/* Without limits (a client before its HELLO_ACK) only they are skipped. */
static void test_no_limits(void)
{
	unsigned char buf[CTL_MSG_MAX];
	const struct golden *g = golden_of(CTL_ARM);
	struct ctl_msg out;
	char why[128] = "";
	int rc1, rc2;

	memcpy(buf, g->bytes, g->len);
	poke(buf, H, 4, 0xffffffffu);     /* timer_id */
	poke(buf, H + 4, 4, 0xffffffffu); /* cpu */
	rc1 = ctl_decode(buf, g->len, NULL, &out, why, sizeof(why));
	poke(buf, H + 8, 4, 3); /* clock: checked with or without limits */
	rc2 = ctl_decode(buf, g->len, NULL, &out, why, sizeof(why));
	tap_ok(rc1 == 0 && rc2 == -EINVAL && strstr(why, "ARM.clock 3"),
	       "no limits: ARM timer_id and cpu not checked (%d), clock still is (%d \"%s\")", rc1, rc2, why);
}

/* ---- lengths ---- */

static void test_truncations(void)
{
	for (size_t i = 0; i < NGOLDEN; i++) {
		const struct golden *g = &golden[i];
		size_t bad = 0;

		for (size_t n = 0; n < g->len; n++) {
			struct ctl_msg out;
			char why[128] = "";

			if (decode_exact(g->bytes, n, &lim, &out, why, sizeof(why)) != -EPROTO || !why[0])
				bad++;
		}
		tap_ok(bad == 0, "%s: each of the %zu truncations refused, -EPROTO (%zu not)",
		       ctl_type_name(g->m.type), g->len, bad);
	}
}

static void test_longer(void)
{
	for (size_t i = 0; i < NGOLDEN; i++) {
		const struct golden *g = &golden[i];
		unsigned char buf[CTL_MSG_MAX + 1];
		struct ctl_msg out;
		char why1[128] = "", why2[128] = "";
		int rc1, rc2;

		memcpy(buf, g->bytes, g->len);
		buf[g->len] = 0;
		rc1 = decode_exact(buf, g->len + 1, &lim, &out, why1, sizeof(why1));
		poke(buf, 8, 4, g->len + 1);
		rc2 = decode_exact(buf, g->len + 1, &lim, &out, why2, sizeof(why2));
		tap_ok(rc1 == -EPROTO && strstr(why1, "header len") && rc2 == -EPROTO &&
			       strstr(why2, ctl_type_name(g->m.type)),
		       "%s one byte longer refused: as received (%d \"%s\"), with the header's len too (%d \"%s\")",
		       ctl_type_name(g->m.type), rc1, why1, rc2, why2);
	}
}

static void test_oversize(void)
{
	static const size_t sizes[] = { CTL_MSG_MAX, CTL_MSG_MAX + 1, 65536 };

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t n = sizes[i];
		unsigned char *buf = calloc(1, n);
		struct ctl_msg out;
		char why[128] = "";
		int rc, want = n > CTL_MSG_MAX ? -EMSGSIZE : -EPROTO;

		if (!buf)
			tap_bail("out of memory");
		memcpy(buf, golden_of(CTL_ARM)->bytes, H);
		poke(buf, 8, 4, n);
		rc = ctl_decode(buf, n, &lim, &out, why, sizeof(why));
		tap_ok(rc == want, "%zu bytes, header len agreeing: %d (want %d) \"%s\"", n, rc, want, why);
		free(buf);
	}
}

/* ---- the reason buffer ---- */

static void test_why_buffer(void)
{
	const struct golden *g = golden_of(CTL_ARM);
	unsigned char buf[CTL_MSG_MAX];
	struct ctl_msg out;
	char why[16];
	int rc;

	memcpy(buf, g->bytes, g->len);
	poke(buf, H + 4, 4, 4000000000u); /* cpu: a long reason */
	memset(why, '#', sizeof(why));
	rc = ctl_decode(buf, g->len, &lim, &out, why, 8);
	tap_ok(rc == -EINVAL && strcmp(why, "ARM.cpu") == 0 && why[8] == '#' && why[15] == '#',
	       "a reason cut to an 8-byte buffer: \"%.8s\", NUL-terminated, nothing written past it", why);
	memset(why, '#', sizeof(why));
	rc = ctl_decode(buf, g->len, &lim, &out, why, 0);
	tap_ok(rc == -EINVAL && why[0] == '#', "whylen 0: nothing written, still -EINVAL (%d)", rc);
	rc = ctl_decode(buf, g->len, &lim, &out, NULL, 0);
	tap_ok(rc == -EINVAL && out.type == 0, "why NULL: still -EINVAL (%d), *out left zeroed", rc);
}

/* ---- encode ---- */

static bool all_bytes(const unsigned char *p, size_t n, unsigned char v)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != v)
			return false;
	return true;
}

static void test_encode_small(void)
{
	for (size_t i = 0; i < NGOLDEN; i++) {
		const struct golden *g = &golden[i];
		size_t bad = 0;

		for (size_t n = 0; n < g->len; n++) {
			unsigned char buf[CTL_MSG_MAX];

			memset(buf, 0xa5, sizeof(buf));
			if (ctl_encode(&g->m, buf, n) != 0 || !all_bytes(buf, sizeof(buf), 0xa5))
				bad++;
		}
		tap_ok(bad == 0, "%s: encode into each buffer of 0..%zu bytes returns 0, writes nothing (%zu not)",
		       ctl_type_name(g->m.type), g->len - 1, bad);
	}
}

struct invalid_msg {
	const char *what;
	struct ctl_msg m;
};

static const struct invalid_msg invalid[] = {
	{ "version 0", { 0, CTL_BYE, 1, .u.arm = { 0 } } },
	{ "version 2", { 2, CTL_BYE, 1, .u.arm = { 0 } } },
	{ "type 9", { 1, 9, 1, .u.arm = { 0 } } },
	{ "CPU_STATS.pad 1", { 1, CTL_CPU_STATS, 1, .u.index = { 0, 1 } } },
	{ "CLIENT_STATS.pad 1", { 1, CTL_CLIENT_STATS, 1, .u.index = { 0, 1 } } },
	{ "HELLO.flags 1", { 1, CTL_HELLO, 1, .u.hello = { 1, 1, 1, 0 } } },
	{ "HELLO versions 2..2", { 1, CTL_HELLO, 1, .u.hello = { 2, 2, 0, 0 } } },
	{ "ARM.flags 16", { 1, CTL_ARM, 1, .u.arm = { 0, 0, 0, 16, 0, 0 } } },
	{ "RESERVE.count 0", { 1, CTL_RESERVE, 1, .u.reserve = { 0, 0 } } },
	{ "ARM.period 999 ns", { 1, CTL_ARM, 1, .u.arm = { 0, 0, 1, CTL_ARM_PERIODIC, 0, 999 } } },
	{ "CANCEL.pad 1", { 1, CTL_CANCEL, 1, .u.cancel = { 0, 1 } } },
	{ "HELLO_ACK.ncpus 0", { 1, CTL_HELLO_ACK, 1, .u.hello_ack = { 1, 0, 0, 1, 1, 1 } } },
	{ "ERROR.errno_code 0", { 1, CTL_ERROR, 1, .u.error = { 0, 0, "x" } } },
	{ "ERROR.why with a tab", { 1, CTL_ERROR, 1, .u.error = { 1, 0, "a\tb" } } },
};
#define NINVALID (sizeof(invalid) / sizeof(invalid[0]))

static void test_encode_invalid(void)
{
	struct ctl_msg m;
	unsigned char buf[CTL_MSG_MAX];

	for (size_t i = 0; i < NINVALID; i++) {
		memset(buf, 0xa5, sizeof(buf));
		tap_ok(ctl_encode(&invalid[i].m, buf, sizeof(buf)) == 0 && all_bytes(buf, sizeof(buf), 0xa5),
		       "encode refuses %s, writes nothing", invalid[i].what);
	}
	ctl_msg_init(&m, CTL_ERROR, 1);
	m.u.error.errno_code = 1;
	memset(m.u.error.why, 'w', CTL_WHY_MAX);
	tap_ok(ctl_encode(&m, buf, sizeof(buf)) == 0, "encode refuses ERROR.why without a NUL");
	/* Limits are the receiver's: the encoder knows none. */
	ctl_msg_init(&m, CTL_ARM, 1);
	m.u.arm.cpu = 100000;
	m.u.arm.timer_id = 100000;
	tap_ok(ctl_encode(&m, buf, sizeof(buf)) == 48, "encode checks no limits (ARM.cpu 100000)");
}

static void test_encode_why_padding(void)
{
	const struct golden *g = golden_of(CTL_ERROR);
	struct ctl_msg m = g->m, out;
	unsigned char buf[CTL_MSG_MAX];
	size_t n, len = strlen(m.u.error.why);

	memset(m.u.error.why + len + 1, 'z', CTL_WHY_MAX - len - 1); /* leftovers after the NUL */
	n = ctl_encode(&m, buf, sizeof(buf));
	tap_ok(n == g->len && memcmp(buf, g->bytes, n) == 0 && ctl_decode(buf, n, &lim, &out, NULL, 0) == 0 &&
		       strcmp(out.u.error.why, g->m.u.error.why) == 0,
	       "ERROR.why with bytes after its NUL: encoded zero-filled, as the hand-written message");
}

static void test_names(void)
{
	static const char *const names[] = { "HELLO", "ARM", "CANCEL", "STATS", "BYE",
					     "HELLO_ACK", "OK", "ERROR", "STATS_REPLY",
					     "CPU_STATS", "CLIENT_STATS", "CPU_STATS_REPLY",
					     "CLIENT_STATS_REPLY", "RESERVE" };
	bool ok = true;

	for (size_t i = 0; i < NGOLDEN; i++)
		ok = ok && strcmp(ctl_type_name(golden[i].m.type), names[i]) == 0;
	tap_ok(ok && strcmp(ctl_type_name(0), "unknown") == 0 && strcmp(ctl_type_name(0x8005), "unknown") == 0 &&
		       strcmp(ctl_type_name(9), "unknown") == 0 && ctl_msg_size(9) == 0 &&
		       ctl_msg_size(0) == 0 && ctl_msg_size(0xffff) == 0,
	       "ctl_type_name and ctl_msg_size of every type, and of unknown ones");
}

/* ctl_peek: the header's type and seq, even of a message ctl_decode refuses. */
static void test_peek(void)
{
	unsigned char bad[CTL_MSG_MAX];
	uint16_t type;
	uint32_t seq;
	bool ok = true;

	for (size_t i = 0; i < NGOLDEN; i++) {
		ctl_peek(golden[i].bytes, golden[i].len, &type, &seq);
		ok = ok && type == golden[i].m.type && seq == golden[i].m.seq;
	}
	memcpy(bad, golden[1].bytes, golden[1].len);
	bad[0] ^= 0xff; /* the magic: ctl_decode refuses it */
	ctl_peek(bad, golden[1].len, &type, &seq);
	ok = ok && type == CTL_ARM && seq == 5;
	ctl_peek(bad, CTL_HDR_SIZE - 1, &type, &seq);
	tap_ok(ok && type == 0 && seq == 0, "ctl_peek: type and seq of every golden message and of a bad magic; "
					      "0 and 0 for a short one");
}

/* ---- random buffers ---- */

struct fuzz_stats {
	size_t tried[3], accepted[3], mismatch, bad_errno, no_reason;
};

static const uint16_t some_types[] = { CTL_HELLO, CTL_ARM, CTL_CANCEL, CTL_STATS, CTL_BYE,
				       CTL_HELLO_ACK, CTL_OK, CTL_ERROR, CTL_STATS_REPLY,
				       CTL_CPU_STATS, CTL_CLIENT_STATS, CTL_CPU_STATS_REPLY,
				       CTL_CLIENT_STATS_REPLY, CTL_RESERVE, 0, 9, 0x8000, 0x8005, 0xffff };

/* Kind 1: a valid header (mostly of the right length) and a random body. */
static size_t fill_header_random_body(unsigned char *buf)
{
	uint16_t type = some_types[rnd_below(sizeof(some_types) / sizeof(some_types[0]))];
	size_t n = ctl_msg_size(type);

	if (n == 0 || rnd_below(4) == 0)
		n = H + rnd_below(CTL_MSG_MAX - H + 1);
	memcpy(buf, golden_of(CTL_BYE)->bytes, H);
	poke(buf, 6, 2, type);
	poke(buf, 8, 4, n);
	poke(buf, 12, 4, rnd());
	for (size_t i = H; i < n; i++)
		buf[i] = (unsigned char)rnd();
	return n;
}

/* Kind 2: a valid message with one to four random bytes changed. */
static size_t fill_mutated(unsigned char *buf)
{
	struct ctl_msg m;
	size_t n, k = 1 + rnd_below(4);

	random_valid(golden[rnd_below(NGOLDEN)].m.type, &m);
	n = ctl_encode(&m, buf, CTL_MSG_MAX);
	while (k--)
		buf[rnd_below(n)] = (unsigned char)(rnd_below(3) ? rnd() : rnd_below(8));
	return n;
}

static size_t fill_random(unsigned char *buf)
{
	size_t n = rnd_below(CTL_MSG_MAX + 9);

	for (size_t i = 0; i < n; i++)
		buf[i] = (unsigned char)rnd();
	return n;
}

static void fuzz_one(int kind, struct fuzz_stats *st)
{
	unsigned char buf[CTL_MSG_MAX + 8], again[CTL_MSG_MAX];
	size_t n = kind == 0 ? fill_random(buf) : kind == 1 ? fill_header_random_body(buf) : fill_mutated(buf);
	struct ctl_msg out;
	char why[128];
	int rc = ctl_decode(buf, n, &lim, &out, why, sizeof(why));

	st->tried[kind]++;
	if (rc == 0) {
		st->accepted[kind]++;
		if (ctl_encode(&out, again, sizeof(again)) != n || memcmp(again, buf, n) != 0)
			st->mismatch++;
	} else if (rc != -EPROTO && rc != -EINVAL && rc != -EMSGSIZE) {
		st->bad_errno++;
	} else if (!why[0]) {
		st->no_reason++;
	}
}

static void test_random(uint64_t seed)
{
	struct fuzz_stats st;

	memset(&st, 0, sizeof(st));
	rng_state = seed;
	for (int i = 0; i < NRANDOM; i++)
		fuzz_one((int)rnd_below(3), &st);
	tap_diag("seed %" PRIu64 ": accepted %zu/%zu random, %zu/%zu random bodies, %zu/%zu mutated", seed,
		 st.accepted[0], st.tried[0], st.accepted[1], st.tried[1], st.accepted[2], st.tried[2]);
	tap_ok(st.mismatch == 0, "%d random buffers: every accepted one re-encodes to its bytes (%zu differ)",
	       NRANDOM, st.mismatch);
	tap_ok(st.bad_errno == 0 && st.no_reason == 0,
	       "every refusal is -EPROTO, -EINVAL or -EMSGSIZE with a reason (%zu other errors, %zu silent)",
	       st.bad_errno, st.no_reason);
	/* Guards the loop itself: it must reach the body checks. */
	tap_ok(st.accepted[1] > 0 && st.accepted[2] > 0 && st.accepted[2] < st.tried[2],
	       "the loop reaches both sides of the body checks");
}

int main(void)
{
	const char *s = getenv("CTLPROTO_SEED");
	uint64_t seed = s ? strtoull(s, NULL, 0) : 0x5eed0c7c1u;

	if (seed == 0)
		seed = 1; /* xorshift's one stuck state */
	tap_plan((int)(NGOLDEN * 5 + NCASES + 2 + 1 + 3 + 3 + NINVALID + 2 + 1 + 1 + 3 + 1));
	rng_state = seed;
	test_golden();
	test_roundtrip();
	test_checks();
	test_why_length();
	test_no_limits();
	test_truncations();
	test_longer();
	test_oversize();
	test_why_buffer();
	test_encode_small();
	test_encode_invalid();
	test_encode_why_padding();
	test_names();
	test_peek();
	test_random(seed);
	return tap_done();
}
