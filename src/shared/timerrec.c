/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Timer records (see timerrec.h): packing into ring words and the checks. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "shared/timerrec.h"

#define OP_MASK 0xffull
#define GEN_MASK 0xffffffffull

void timerrec_encode(const struct timerrec *t, struct ring_rec *r)
{
	r->word[0] = (uint64_t)t->op | (uint64_t)t->clock << 8 | (uint64_t)t->flags << 16 |
		     (uint64_t)t->timer_id << 32;
	r->word[1] = (uint64_t)t->gen | (uint64_t)(uint32_t)t->error << 32;
	switch (t->op) {
	case TREC_ARM:
		r->word[2] = t->expires;
		r->word[3] = t->period;
		break;
	case TREC_FIRE:
		r->word[2] = t->expires;
		r->word[3] = t->overrun;
		break;
	default:
		r->word[2] = 0;
		r->word[3] = 0;
		break;
	}
}

static int refuse(char *why, size_t whylen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int refuse(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;

	if (why && whylen) {
		va_start(ap, fmt);
		vsnprintf(why, whylen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* The ARM checks of the control protocol, on a record. */
static int check_arm(const struct timerrec *t, char *why, size_t whylen)
{
	bool periodic = t->flags & CTL_ARM_PERIODIC;
	bool ns = t->clock != CTL_CLOCK_JIFFIES;

	if (t->clock > CTL_CLOCK_REALTIME)
		return refuse(why, whylen, "ARM.clock %u unknown", t->clock);
	if (t->flags & ~CTL_ARM_FLAGS)
		return refuse(why, whylen, "ARM.flags 0x%x unknown", t->flags);
	if (ns && (t->expires > INT64_MAX || t->period > INT64_MAX))
		return refuse(why, whylen, "ARM.%s beyond INT64_MAX ns",
			      t->expires > INT64_MAX ? "expires" : "period");
	if (periodic && t->period == 0)
		return refuse(why, whylen, "ARM.period 0 with PERIODIC");
	if (!periodic && t->period != 0)
		return refuse(why, whylen, "ARM.period %llu without PERIODIC", (unsigned long long)t->period);
	if (periodic && ns && t->period < CTL_MIN_PERIOD_NS)
		return refuse(why, whylen, "ARM.period %llu ns < %u", (unsigned long long)t->period,
			      CTL_MIN_PERIOD_NS);
	return 0;
}

int timerrec_decode_sub(const struct ring_rec *r, const struct ctl_limits *lim, struct timerrec *out,
			char *why, size_t whylen)
{
	struct timerrec t = { 0 };

	memset(out, 0, sizeof(*out));
	t.op = (uint8_t)(r->word[0] & OP_MASK);
	t.clock = (uint8_t)(r->word[0] >> 8);
	t.flags = (uint16_t)(r->word[0] >> 16);
	t.timer_id = (uint32_t)(r->word[0] >> 32);
	t.gen = (uint32_t)(r->word[1] & GEN_MASK);
	if (r->word[1] >> 32)
		return refuse(why, whylen, "record word1 high bits 0x%llx, not 0",
			      (unsigned long long)(r->word[1] >> 32));
	if (lim && t.timer_id >= lim->max_timers)
		return refuse(why, whylen, "timer_id %u >= quota %u", t.timer_id, lim->max_timers);
	switch (t.op) {
	case TREC_ARM:
		t.expires = r->word[2];
		t.period = r->word[3];
		if (check_arm(&t, why, whylen) < 0)
			return -EINVAL;
		break;
	case TREC_CANCEL:
		if ((r->word[0] & 0xffffff00ull) || r->word[2] || r->word[3])
			return refuse(why, whylen, "CANCEL record with non-zero unused bits");
		break;
	default:
		return refuse(why, whylen, "record op 0x%x unknown", t.op);
	}
	*out = t;
	return 0;
}

int timerrec_decode_deliv(const struct ring_rec *r, struct timerrec *out)
{
	struct timerrec t = { 0 };

	memset(out, 0, sizeof(*out));
	t.op = (uint8_t)(r->word[0] & OP_MASK);
	t.timer_id = (uint32_t)(r->word[0] >> 32);
	t.gen = (uint32_t)(r->word[1] & GEN_MASK);
	if (r->word[0] & 0xffffff00ull)
		return -EINVAL;
	switch (t.op) {
	case TREC_FIRE:
		if (r->word[1] >> 32)
			return -EINVAL;
		t.expires = r->word[2];
		t.overrun = r->word[3];
		break;
	case TREC_ERROR:
		t.error = (int32_t)(r->word[1] >> 32);
		if (t.error <= 0 || t.error > CTL_ERRNO_MAX || r->word[2] || r->word[3])
			return -EINVAL;
		break;
	default:
		return -EINVAL;
	}
	*out = t;
	return 0;
}

uint8_t timerrec_op(const struct ring_rec *r)
{
	return (uint8_t)(r->word[0] & OP_MASK);
}

uint32_t timerrec_timer_id(const struct ring_rec *r)
{
	return (uint32_t)(r->word[0] >> 32);
}

uint32_t timerrec_gen(const struct ring_rec *r)
{
	return (uint32_t)(r->word[1] & GEN_MASK);
}

void timerrec_fire_fold(struct ring_rec *r, uint64_t expires, uint64_t more)
{
	r->word[2] = expires;
	r->word[3] += more;
}

void timerrec_void(struct ring_rec *r)
{
	r->word[0] = 0;
}

bool timerrec_voided(const struct ring_rec *r)
{
	return r->word[0] == 0;
}

size_t timer_shm_region(uint32_t slots)
{
	size_t n = ring_mem_size(slots);

	return n ? (n + TIMER_SHM_HDR - 1) / TIMER_SHM_HDR * TIMER_SHM_HDR : 0;
}

size_t timer_shm_size(uint32_t ncpus, uint32_t slots)
{
	return TIMER_SHM_HDR + 2 * (size_t)ncpus * timer_shm_region(slots);
}
