/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The control protocol codec (see ctlproto.h for the wire format and the
 * table of checks).
 *
 * The body structs have the wire layout (asserted below), so one offset per
 * field serves both sides; the bytes are still moved one field at a time
 * with explicit little-endian conversions, never by pointing a struct at the
 * buffer (a datagram buffer need not be aligned, and reading it through a
 * struct would break strict aliasing and tie the format to the host's byte
 * order).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "shared/ctlproto.h"

/* The header as laid out on the wire; used for its offsets only. */
struct ctl_wire_hdr {
	uint32_t magic;
	uint16_t version, type;
	uint32_t len, seq;
};

#define WIRE(st, f, o) _Static_assert(offsetof(st, f) == (o), #st "." #f " at offset " #o)
WIRE(struct ctl_wire_hdr, magic, 0);
WIRE(struct ctl_wire_hdr, version, 4);
WIRE(struct ctl_wire_hdr, type, 6);
WIRE(struct ctl_wire_hdr, len, 8);
WIRE(struct ctl_wire_hdr, seq, 12);
_Static_assert(sizeof(struct ctl_wire_hdr) == CTL_HDR_SIZE, "header size");

WIRE(struct ctl_hello, min_version, 0);
WIRE(struct ctl_hello, max_version, 2);
WIRE(struct ctl_hello, flags, 4);
WIRE(struct ctl_hello, ncpus_wanted, 8);
_Static_assert(sizeof(struct ctl_hello) == 12, "HELLO body size");

WIRE(struct ctl_arm, timer_id, 0);
WIRE(struct ctl_arm, cpu, 4);
WIRE(struct ctl_arm, clock, 8);
WIRE(struct ctl_arm, flags, 12);
WIRE(struct ctl_arm, expires, 16);
WIRE(struct ctl_arm, period, 24);
_Static_assert(sizeof(struct ctl_arm) == 32, "ARM body size");

WIRE(struct ctl_cancel, timer_id, 0);
WIRE(struct ctl_cancel, pad, 4);
_Static_assert(sizeof(struct ctl_cancel) == 8, "CANCEL body size");

WIRE(struct ctl_reserve, count, 0);
WIRE(struct ctl_reserve, pad, 4);
_Static_assert(sizeof(struct ctl_reserve) == 8, "RESERVE body size");

WIRE(struct ctl_hello_ack, version, 0);
WIRE(struct ctl_hello_ack, pad, 2);
WIRE(struct ctl_hello_ack, ncpus, 4);
WIRE(struct ctl_hello_ack, ring_slots, 8);
WIRE(struct ctl_hello_ack, max_timers, 12);
WIRE(struct ctl_hello_ack, max_msgs_per_sec, 16);
_Static_assert(sizeof(struct ctl_hello_ack) == 20, "HELLO_ACK body size");

WIRE(struct ctl_ok, timer_id, 0);
WIRE(struct ctl_ok, pad, 4);
_Static_assert(sizeof(struct ctl_ok) == 8, "OK body size");

WIRE(struct ctl_error, errno_code, 0);
WIRE(struct ctl_error, ref_type, 4);
WIRE(struct ctl_error, why, 8);
_Static_assert(sizeof(struct ctl_error) == 8 + CTL_WHY_MAX, "ERROR body size");

WIRE(struct ctl_stats_reply, pending, 0);
WIRE(struct ctl_stats_reply, fired, 8);
WIRE(struct ctl_stats_reply, overruns, 16);
WIRE(struct ctl_stats_reply, dropped, 24);
_Static_assert(sizeof(struct ctl_stats_reply) == 32, "STATS_REPLY body size");

WIRE(struct ctl_index, index, 0);
WIRE(struct ctl_index, pad, 4);
_Static_assert(sizeof(struct ctl_index) == 8, "CPU_STATS/CLIENT_STATS body size");

WIRE(struct ctl_cpu_stats_reply, cpu, 0);
WIRE(struct ctl_cpu_stats_reply, clients, 4);
WIRE(struct ctl_cpu_stats_reply, pending_jiffies, 8);
WIRE(struct ctl_cpu_stats_reply, pending_ns, 16);
WIRE(struct ctl_cpu_stats_reply, fired, 24);
WIRE(struct ctl_cpu_stats_reply, overruns, 32);
WIRE(struct ctl_cpu_stats_reply, next_expiry_ns, 40);
WIRE(struct ctl_cpu_stats_reply, late_p50_ns, 48);
WIRE(struct ctl_cpu_stats_reply, late_p99_ns, 56);
WIRE(struct ctl_cpu_stats_reply, late_max_ns, 64);
_Static_assert(sizeof(struct ctl_cpu_stats_reply) == 72, "CPU_STATS_REPLY body size");

WIRE(struct ctl_client_stats_reply, pid, 0);
WIRE(struct ctl_client_stats_reply, uid, 4);
WIRE(struct ctl_client_stats_reply, pending, 8);
WIRE(struct ctl_client_stats_reply, fired, 16);
WIRE(struct ctl_client_stats_reply, overruns, 24);
WIRE(struct ctl_client_stats_reply, dropped, 32);
_Static_assert(sizeof(struct ctl_client_stats_reply) == 40, "CLIENT_STATS_REPLY body size");

_Static_assert(CTL_HDR_SIZE + sizeof(struct ctl_error) <= CTL_MSG_MAX, "the largest message fits");
_Static_assert(CTL_HDR_SIZE + sizeof(struct ctl_cpu_stats_reply) <= CTL_MSG_MAX, "CPU_STATS_REPLY fits");

/* One field of a body: an integer of @size bytes, or raw bytes. */
struct ctl_field {
	uint8_t off, size;
	bool raw;
};

#define INT(st, f) { offsetof(st, f), sizeof(((st *)0)->f), false }
#define RAW(st, f) { offsetof(st, f), sizeof(((st *)0)->f), true }

static const struct ctl_field hello_fields[] = {
	INT(struct ctl_hello, min_version), INT(struct ctl_hello, max_version),
	INT(struct ctl_hello, flags), INT(struct ctl_hello, ncpus_wanted),
};
static const struct ctl_field arm_fields[] = {
	INT(struct ctl_arm, timer_id), INT(struct ctl_arm, cpu), INT(struct ctl_arm, clock),
	INT(struct ctl_arm, flags), INT(struct ctl_arm, expires), INT(struct ctl_arm, period),
};
static const struct ctl_field cancel_fields[] = {
	INT(struct ctl_cancel, timer_id), INT(struct ctl_cancel, pad),
};
static const struct ctl_field reserve_fields[] = {
	INT(struct ctl_reserve, count), INT(struct ctl_reserve, pad),
};
static const struct ctl_field hello_ack_fields[] = {
	INT(struct ctl_hello_ack, version), INT(struct ctl_hello_ack, pad),
	INT(struct ctl_hello_ack, ncpus), INT(struct ctl_hello_ack, ring_slots),
	INT(struct ctl_hello_ack, max_timers), INT(struct ctl_hello_ack, max_msgs_per_sec),
};
static const struct ctl_field ok_fields[] = {
	INT(struct ctl_ok, timer_id), INT(struct ctl_ok, pad),
};
static const struct ctl_field error_fields[] = {
	INT(struct ctl_error, errno_code), INT(struct ctl_error, ref_type), RAW(struct ctl_error, why),
};
static const struct ctl_field stats_reply_fields[] = {
	INT(struct ctl_stats_reply, pending), INT(struct ctl_stats_reply, fired),
	INT(struct ctl_stats_reply, overruns), INT(struct ctl_stats_reply, dropped),
};
static const struct ctl_field index_fields[] = {
	INT(struct ctl_index, index), INT(struct ctl_index, pad),
};
static const struct ctl_field cpu_stats_reply_fields[] = {
	INT(struct ctl_cpu_stats_reply, cpu), INT(struct ctl_cpu_stats_reply, clients),
	INT(struct ctl_cpu_stats_reply, pending_jiffies), INT(struct ctl_cpu_stats_reply, pending_ns),
	INT(struct ctl_cpu_stats_reply, fired), INT(struct ctl_cpu_stats_reply, overruns),
	INT(struct ctl_cpu_stats_reply, next_expiry_ns), INT(struct ctl_cpu_stats_reply, late_p50_ns),
	INT(struct ctl_cpu_stats_reply, late_p99_ns), INT(struct ctl_cpu_stats_reply, late_max_ns),
};
static const struct ctl_field client_stats_reply_fields[] = {
	INT(struct ctl_client_stats_reply, pid), INT(struct ctl_client_stats_reply, uid),
	INT(struct ctl_client_stats_reply, pending), INT(struct ctl_client_stats_reply, fired),
	INT(struct ctl_client_stats_reply, overruns), INT(struct ctl_client_stats_reply, dropped),
};

/* ---- range checks: 0 or a negative errno with the reason in why ---- */

typedef int check_fn(const struct ctl_msg *m, const struct ctl_limits *lim, char *why, size_t whylen);

static int refuse(int err, char *why, size_t whylen, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int refuse(int err, char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;

	if (why && whylen) {
		va_start(ap, fmt);
		vsnprintf(why, whylen, fmt, ap);
		va_end(ap);
	}
	return -err;
}

static int check_hello(const struct ctl_msg *m, const struct ctl_limits *lim, char *why, size_t whylen)
{
	const struct ctl_hello *h = &m->u.hello;

	if (h->min_version == 0)
		return refuse(EINVAL, why, whylen, "HELLO.min_version 0: versions start at 1");
	if (h->min_version > h->max_version)
		return refuse(EINVAL, why, whylen, "HELLO.min_version %u > max_version %u",
			      h->min_version, h->max_version);
	if (h->flags)
		return refuse(EINVAL, why, whylen, "HELLO.flags 0x%" PRIx32 ", not 0", h->flags);
	if (lim && h->ncpus_wanted > lim->ncpus)
		return refuse(EINVAL, why, whylen, "HELLO.ncpus_wanted %" PRIu32 " > %" PRIu32 " CPUs",
			      h->ncpus_wanted, lim->ncpus);
	if (CTL_VERSION < h->min_version || CTL_VERSION > h->max_version)
		return refuse(EPROTO, why, whylen, "HELLO.min_version..max_version %u..%u exclude version %d",
			      h->min_version, h->max_version, CTL_VERSION);
	return 0;
}

/* The ns clocks keep times and periods in int64 (timespec, the kernel's
 * ktime_t): an unsigned value above INT64_MAX would turn negative. */
static int check_ns_value(const char *field, uint64_t v, char *why, size_t whylen)
{
	if (v > INT64_MAX)
		return refuse(EINVAL, why, whylen, "ARM.%s %" PRIu64 " ns > INT64_MAX", field, v);
	return 0;
}

static int check_arm_period(const struct ctl_arm *a, bool ns, char *why, size_t whylen)
{
	if (!(a->flags & CTL_ARM_PERIODIC)) {
		if (a->period)
			return refuse(EINVAL, why, whylen, "ARM.period %" PRIu64 " without PERIODIC", a->period);
		return 0;
	}
	if (a->period == 0)
		return refuse(EINVAL, why, whylen, "ARM.period 0 with PERIODIC");
	if (ns && a->period < CTL_MIN_PERIOD_NS)
		return refuse(EINVAL, why, whylen, "ARM.period %" PRIu64 " ns < %u ns minimum", a->period,
			      CTL_MIN_PERIOD_NS);
	return ns ? check_ns_value("period", a->period, why, whylen) : 0;
}

static int check_arm(const struct ctl_msg *m, const struct ctl_limits *lim, char *why, size_t whylen)
{
	const struct ctl_arm *a = &m->u.arm;
	bool ns = a->clock != CTL_CLOCK_JIFFIES;
	int rc;

	if (lim && a->timer_id >= lim->max_timers)
		return refuse(EINVAL, why, whylen, "ARM.timer_id %" PRIu32 " >= quota %" PRIu32,
			      a->timer_id, lim->max_timers);
	if (lim && a->cpu >= lim->ncpus)
		return refuse(EINVAL, why, whylen, "ARM.cpu %" PRIu32 " >= %" PRIu32 " CPUs", a->cpu,
			      lim->ncpus);
	if (a->clock > CTL_CLOCK_REALTIME)
		return refuse(EINVAL, why, whylen, "ARM.clock %" PRIu32 " unknown (0..%d)", a->clock,
			      CTL_CLOCK_REALTIME);
	if (a->flags & ~CTL_ARM_FLAGS)
		return refuse(EINVAL, why, whylen, "ARM.flags 0x%" PRIx32 " has unknown bits 0x%" PRIx32,
			      a->flags, a->flags & ~CTL_ARM_FLAGS);
	if (ns && (rc = check_ns_value("expires", a->expires, why, whylen)) < 0)
		return rc;
	return check_arm_period(a, ns, why, whylen);
}

/* CANCEL and OK: a timer id within the quota and a zero pad. */
static int check_id_pad(const char *type, uint32_t id, uint32_t pad, const struct ctl_limits *lim,
			char *why, size_t whylen)
{
	if (lim && id >= lim->max_timers)
		return refuse(EINVAL, why, whylen, "%s.timer_id %" PRIu32 " >= quota %" PRIu32, type, id,
			      lim->max_timers);
	if (pad)
		return refuse(EINVAL, why, whylen, "%s.pad %" PRIu32 ", not 0", type, pad);
	return 0;
}

static int check_cancel(const struct ctl_msg *m, const struct ctl_limits *lim, char *why, size_t whylen)
{
	return check_id_pad("CANCEL", m->u.cancel.timer_id, m->u.cancel.pad, lim, why, whylen);
}

static int check_reserve(const struct ctl_msg *m, const struct ctl_limits *lim, char *why, size_t whylen)
{
	const struct ctl_reserve *r = &m->u.reserve;

	(void)lim;
	if (r->count == 0 || r->count > CTL_RESERVE_MAX || r->count < -CTL_RESERVE_MAX)
		return refuse(EINVAL, why, whylen, "RESERVE.count %" PRId32 " not in +-1..%d", r->count,
			      CTL_RESERVE_MAX);
	if (r->pad)
		return refuse(EINVAL, why, whylen, "RESERVE.pad %" PRIu32 ", not 0", r->pad);
	return 0;
}

/* CPU_STATS and CLIENT_STATS: any index (the daemon answers ENOENT past
 * the last), a zero pad. */
static int check_index(const struct ctl_msg *m, const struct ctl_limits *lim, char *why, size_t whylen)
{
	(void)lim;
	if (m->u.index.pad)
		return refuse(EINVAL, why, whylen, "%s.pad %" PRIu32 ", not 0",
			      m->type == CTL_CPU_STATS ? "CPU_STATS" : "CLIENT_STATS", m->u.index.pad);
	return 0;
}

static int check_ok(const struct ctl_msg *m, const struct ctl_limits *lim, char *why, size_t whylen)
{
	return check_id_pad("OK", m->u.ok.timer_id, m->u.ok.pad, lim, why, whylen);
}

static int check_hello_ack(const struct ctl_msg *m, const struct ctl_limits *lim, char *why,
			   size_t whylen)
{
	const struct ctl_hello_ack *h = &m->u.hello_ack;
	const struct {
		const char *name;
		uint32_t v;
	} counts[] = {
		{ "ncpus", h->ncpus },
		{ "ring_slots", h->ring_slots },
		{ "max_timers", h->max_timers },
		{ "max_msgs_per_sec", h->max_msgs_per_sec },
	};

	if (h->version != CTL_VERSION)
		return refuse(EPROTO, why, whylen, "HELLO_ACK.version %u, not %d", h->version, CTL_VERSION);
	if (h->pad)
		return refuse(EINVAL, why, whylen, "HELLO_ACK.pad %u, not 0", h->pad);
	for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++)
		if (counts[i].v == 0)
			return refuse(EINVAL, why, whylen, "HELLO_ACK.%s 0", counts[i].name);
	return 0;
}

static bool is_request(uint32_t type)
{
	return type >= CTL_HELLO && type <= CTL_RESERVE;
}

/* A peer's text ends up on terminals and in logs: printable ASCII only, and
 * one encoding (zeros after the NUL). */
static int check_why(const char *s, char *why, size_t whylen)
{
	const char *nul = memchr(s, '\0', CTL_WHY_MAX);
	size_t n;

	if (!nul)
		return refuse(EINVAL, why, whylen, "ERROR.why has no NUL in %d bytes", CTL_WHY_MAX);
	n = (size_t)(nul - s);
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] > 0x7e)
			return refuse(EINVAL, why, whylen, "ERROR.why byte %zu is 0x%02x, not printable", i,
				      (unsigned char)s[i]);
	for (size_t i = n + 1; i < CTL_WHY_MAX; i++)
		if (s[i])
			return refuse(EINVAL, why, whylen, "ERROR.why byte %zu after the NUL is 0x%02x, not 0",
				      i, (unsigned char)s[i]);
	return 0;
}

static int check_error(const struct ctl_msg *m, const struct ctl_limits *lim, char *why, size_t whylen)
{
	const struct ctl_error *e = &m->u.error;

	if (e->errno_code < 1 || e->errno_code > CTL_ERRNO_MAX)
		return refuse(EINVAL, why, whylen, "ERROR.errno_code %" PRId32 " not in 1..%d", e->errno_code,
			      CTL_ERRNO_MAX);
	if (e->ref_type && !is_request(e->ref_type))
		return refuse(EINVAL, why, whylen, "ERROR.ref_type 0x%" PRIx32 " is not a request type",
			      e->ref_type);
	return check_why(e->why, why, whylen);
}

/* ---- the table of types ---- */

struct ctl_type_info {
	uint16_t type;
	const char *name;
	uint8_t body; /* bytes after the header */
	const struct ctl_field *fields;
	uint8_t nfields;
	check_fn *check; /* NULL: nothing to check */
};

#define FIELDS(a) (a), (uint8_t)(sizeof(a) / sizeof((a)[0]))

static const struct ctl_type_info types[] = {
	{ CTL_HELLO, "HELLO", sizeof(struct ctl_hello), FIELDS(hello_fields), check_hello },
	{ CTL_ARM, "ARM", sizeof(struct ctl_arm), FIELDS(arm_fields), check_arm },
	{ CTL_CANCEL, "CANCEL", sizeof(struct ctl_cancel), FIELDS(cancel_fields), check_cancel },
	{ CTL_STATS, "STATS", 0, NULL, 0, NULL },
	{ CTL_BYE, "BYE", 0, NULL, 0, NULL },
	{ CTL_CPU_STATS, "CPU_STATS", sizeof(struct ctl_index), FIELDS(index_fields), check_index },
	{ CTL_CLIENT_STATS, "CLIENT_STATS", sizeof(struct ctl_index), FIELDS(index_fields), check_index },
	{ CTL_RESERVE, "RESERVE", sizeof(struct ctl_reserve), FIELDS(reserve_fields), check_reserve },
	{ CTL_HELLO_ACK, "HELLO_ACK", sizeof(struct ctl_hello_ack), FIELDS(hello_ack_fields), check_hello_ack },
	{ CTL_OK, "OK", sizeof(struct ctl_ok), FIELDS(ok_fields), check_ok },
	{ CTL_ERROR, "ERROR", sizeof(struct ctl_error), FIELDS(error_fields), check_error },
	{ CTL_STATS_REPLY, "STATS_REPLY", sizeof(struct ctl_stats_reply), FIELDS(stats_reply_fields), NULL },
	{ CTL_CPU_STATS_REPLY, "CPU_STATS_REPLY", sizeof(struct ctl_cpu_stats_reply),
	  FIELDS(cpu_stats_reply_fields), NULL },
	{ CTL_CLIENT_STATS_REPLY, "CLIENT_STATS_REPLY", sizeof(struct ctl_client_stats_reply),
	  FIELDS(client_stats_reply_fields), NULL },
};

static const struct ctl_type_info *type_info(uint16_t type)
{
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (types[i].type == type)
			return &types[i];
	return NULL;
}

const char *ctl_type_name(uint16_t type)
{
	const struct ctl_type_info *t = type_info(type);

	return t ? t->name : "unknown";
}

size_t ctl_msg_size(uint16_t type)
{
	const struct ctl_type_info *t = type_info(type);

	return t ? CTL_HDR_SIZE + (size_t)t->body : 0;
}

void ctl_msg_init(struct ctl_msg *m, uint16_t type, uint32_t seq)
{
	memset(m, 0, sizeof(*m));
	m->version = CTL_VERSION;
	m->type = type;
	m->seq = seq;
}

/* ---- byte moving ---- */

static void put_le(unsigned char *p, uint64_t v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_le(const unsigned char *p, size_t n)
{
	uint64_t v = 0;

	for (size_t i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* A host integer of @n bytes (2, 4 or 8; signed ones read as their bits). */
static uint64_t load_host(const unsigned char *p, size_t n)
{
	uint16_t v16;
	uint32_t v32;
	uint64_t v64;

	switch (n) {
	case 2: memcpy(&v16, p, 2); return v16;
	case 4: memcpy(&v32, p, 4); return v32;
	default: memcpy(&v64, p, 8); return v64;
	}
}

static void store_host(unsigned char *p, uint64_t v, size_t n)
{
	uint16_t v16 = (uint16_t)v;
	uint32_t v32 = (uint32_t)v;

	switch (n) {
	case 2: memcpy(p, &v16, 2); break;
	case 4: memcpy(p, &v32, 4); break;
	default: memcpy(p, &v, 8); break;
	}
}

static void pack_body(const struct ctl_type_info *t, const struct ctl_msg *m, unsigned char *body)
{
	const unsigned char *src = (const unsigned char *)&m->u;

	for (size_t i = 0; i < t->nfields; i++) {
		const struct ctl_field *f = &t->fields[i];

		if (f->raw)
			memcpy(body + f->off, src + f->off, f->size);
		else
			put_le(body + f->off, load_host(src + f->off, f->size), f->size);
	}
}

static void unpack_body(const struct ctl_type_info *t, const unsigned char *body, struct ctl_msg *m)
{
	unsigned char *dst = (unsigned char *)&m->u;

	for (size_t i = 0; i < t->nfields; i++) {
		const struct ctl_field *f = &t->fields[i];

		if (f->raw)
			memcpy(dst + f->off, body + f->off, f->size);
		else
			store_host(dst + f->off, get_le(body + f->off, f->size), f->size);
	}
}

/* ---- decode and encode ---- */

/* The header's checks; returns the type's entry in *@t. */
static int decode_header(const unsigned char *p, size_t len, const struct ctl_type_info **t,
			 struct ctl_msg *m, char *why, size_t whylen)
{
	uint32_t magic, hlen;

	if (len > CTL_MSG_MAX)
		return refuse(EMSGSIZE, why, whylen, "message of %zu bytes > %d", len, CTL_MSG_MAX);
	if (len < CTL_HDR_SIZE)
		return refuse(EPROTO, why, whylen, "message of %zu bytes: shorter than the %d-byte header",
			      len, CTL_HDR_SIZE);
	magic = (uint32_t)get_le(p + offsetof(struct ctl_wire_hdr, magic), 4);
	m->version = (uint16_t)get_le(p + offsetof(struct ctl_wire_hdr, version), 2);
	m->type = (uint16_t)get_le(p + offsetof(struct ctl_wire_hdr, type), 2);
	hlen = (uint32_t)get_le(p + offsetof(struct ctl_wire_hdr, len), 4);
	m->seq = (uint32_t)get_le(p + offsetof(struct ctl_wire_hdr, seq), 4);
	if (magic != CTL_MAGIC)
		return refuse(EPROTO, why, whylen, "magic 0x%08" PRIx32 ", not 0x%08x", magic, CTL_MAGIC);
	if (m->version != CTL_VERSION)
		return refuse(EPROTO, why, whylen, "version %u, not %d", m->version, CTL_VERSION);
	if (hlen != len)
		return refuse(EPROTO, why, whylen, "header len %" PRIu32 " but %zu bytes received", hlen, len);
	*t = type_info(m->type);
	if (!*t)
		return refuse(EPROTO, why, whylen, "unknown type 0x%04x", m->type);
	if (len != CTL_HDR_SIZE + (size_t)(*t)->body)
		return refuse(EPROTO, why, whylen, "%s of %zu bytes, not %d", (*t)->name, len,
			      CTL_HDR_SIZE + (*t)->body);
	return 0;
}

void ctl_peek(const void *buf, size_t len, uint16_t *type, uint32_t *seq)
{
	const unsigned char *p = buf;

	*type = 0;
	*seq = 0;
	if (len < CTL_HDR_SIZE)
		return;
	*type = (uint16_t)get_le(p + offsetof(struct ctl_wire_hdr, type), 2);
	*seq = (uint32_t)get_le(p + offsetof(struct ctl_wire_hdr, seq), 4);
}

int ctl_decode(const void *buf, size_t len, const struct ctl_limits *lim, struct ctl_msg *out,
	       char *why, size_t whylen)
{
	const unsigned char *p = buf;
	const struct ctl_type_info *t = NULL;
	struct ctl_msg m;
	int rc;

	memset(out, 0, sizeof(*out));
	memset(&m, 0, sizeof(m));
	if (why && whylen)
		why[0] = '\0';
	rc = decode_header(p, len, &t, &m, why, whylen);
	if (rc < 0)
		return rc;
	unpack_body(t, p + CTL_HDR_SIZE, &m);
	if (t->check && (rc = t->check(&m, lim, why, whylen)) < 0)
		return rc;
	*out = m;
	return 0;
}

size_t ctl_encode(const struct ctl_msg *m, void *buf, size_t len)
{
	const struct ctl_type_info *t = type_info(m->type);
	unsigned char *p = buf;
	struct ctl_msg c;
	size_t size;

	if (!t || m->version != CTL_VERSION)
		return 0;
	/* The caller's why may hold leftovers after its NUL (snprintf leaves
	 * them): the wire carries zeros there. */
	c = *m;
	if (c.type == CTL_ERROR) {
		char *nul = memchr(c.u.error.why, '\0', CTL_WHY_MAX);

		if (nul)
			memset(nul, 0, (size_t)(c.u.error.why + CTL_WHY_MAX - nul));
	}
	if (t->check && t->check(&c, NULL, NULL, 0) < 0)
		return 0;
	size = CTL_HDR_SIZE + (size_t)t->body;
	if (len < size)
		return 0;
	put_le(p + offsetof(struct ctl_wire_hdr, magic), CTL_MAGIC, 4);
	put_le(p + offsetof(struct ctl_wire_hdr, version), c.version, 2);
	put_le(p + offsetof(struct ctl_wire_hdr, type), c.type, 2);
	put_le(p + offsetof(struct ctl_wire_hdr, len), size, 4);
	put_le(p + offsetof(struct ctl_wire_hdr, seq), c.seq, 4);
	pack_body(t, &c, p + CTL_HDR_SIZE);
	return size;
}
