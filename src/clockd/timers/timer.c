/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A client's timers on one base (see internal.h): slots, submissions,
 * expiry, and the lateness histogram. Everything here runs on the base's
 * thread; the records go out through deliver.c.
 *
 * Never early: a jiffies timer runs from wheel_expire(jiffies) with the
 * jiffies the tick thread saw on the page, so the page already reached its
 * expiry; a ns timer runs only once the clockd clock, read here, reached
 * its deadline. A FIRE record's expires is therefore <= the clock the
 * client reads when it gets the record.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clockd/timers/internal.h"
#include "clockd/timers/wakelead.h"
#include "shared/log.h"
#include "shared/tickmath.h"

#define SLOT_OF(ptr, member) ((struct tb_slot *)((char *)(ptr)-offsetof(struct tb_slot, member)))
#define POP_BATCH 256u

/*
 * Out of memory on a base (a chunk of slots, the deadline heap): the arm
 * gets an ERROR ENOMEM record. Logged once when a run of failures starts,
 * and once when an arm succeeds a second or more after the last failure
 * (log_repeat_end_quiet): a shortage that lets every other allocation
 * through is two lines, not one per arm.
 */
static void oom_note(struct tb_cc *cc, const char *what)
{
	struct tb_base *b = cc->base;

	log_repeat(&b->oom_arm, LOG_WARNING, false,
		   "timer base %u: client pid %d: out of memory for %s; its arm fails with ENOMEM "
		   "(further failures are only counted)", b->cpu, (int)cc->client->pid, what);
}

static void oom_over(struct tb_cc *cc)
{
	struct tb_base *b = cc->base;

	log_repeat_end_quiet(&b->oom_arm, NSEC_PER_SEC, "timer base %u: arms find memory again", b->cpu);
}

static struct hrheap *heap_of(struct tb_base *b, unsigned kind)
{
	return &b->heap[kind == TB_REAL];
}

/* The slot of timer @id, allocating its chunk when @alloc; NULL when the
 * id is out of range, or its chunk does not exist (or cannot be made). */
/* Read CLOCKD_MONOTONIC or CLOCKD_REALTIME in ns, through the clock the
 * bases were given (tb_params.clock). */
static int clock_now(const struct timer_bases *tb, unsigned kind, uint64_t *now)
{
	return tb->p.clock.now_ns(tb->p.clock.ctx, kind == TB_REAL, now);
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* @v rounded up to a multiple of @q. */
static uint64_t round_up(uint64_t v, uint64_t q)
{
	return v % q ? sat_add(v - v % q, q) : v;
}

/* An expiry of @s: @expires is the latest expiry it stands for, @overrun
 * the earlier ones it folds in (periodic timers that missed periods);
 * @due: when on CLOCKD_MONOTONIC, or 0 (tb_deliver). */
static void fire(struct tb_slot *s, uint64_t expires, uint64_t overrun, uint64_t due)
{
	struct tb_cc *cc = s->cc;
	struct tb_base *b = cc->base;
	struct timerrec t = { .op = TREC_FIRE, .timer_id = s->id, .gen = s->gen };
	struct ring_rec r;

	overrun = sat_add(overrun, s->folded);
	s->folded = 0;
	if (s->owing && s->period) {
		/* Its previous record still waits: fold this expiry into it. */
		struct ring_rec *old = &cc->backlog.rec[s->owed & (cc->backlog.cap - 1)];

		timerrec_fire_fold(old, expires, 1 + overrun);
		overrun += 1;
	} else {
		t.expires = expires;
		t.overrun = overrun;
		timerrec_encode(&t, &r);
		tb_deliver(cc, &r, s, due);
		tb_stat_add(&cc->st.fired, 1);
		tb_stat_add(&b->st.fired, 1);
	}
	if (overrun) {
		tb_stat_add(&cc->st.overruns, overrun);
		tb_stat_add(&b->st.overruns, overrun);
	}
}

/* A periodic timer due at @exp, found at @now (>= @exp): the number of
 * missed periods, with @exp moved to the latest expiry <= @now and *@next
 * to the one after (UINT64_MAX: beyond the range, it stops). */
static uint64_t periodic_step(uint64_t *exp, uint64_t period, uint64_t now, uint64_t *next)
{
	uint64_t missed = (now - *exp) / period;

	*exp += missed * period;
	*next = sat_add(*exp, period);
	return missed;
}

/* ---- pending state ---- */

static void pending_inc(struct tb_cc *cc)
{
	cc->npending++;
	tb_stat_set(&cc->st.pending, cc->npending);
}

/* A counter one less, unless it is 0 already: false then. */
static bool dec_if_positive(uint64_t *v)
{
	uint64_t old = __atomic_load_n(v, __ATOMIC_RELAXED);

	while (old && !__atomic_compare_exchange_n(v, &old, old - 1, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
	return old != 0;
}

/* The quota @s held, given back (user_take's inverse): one of its
 * client's reserved ids, or one of its user's armed. */
static void user_put(struct tb_slot *s)
{
	struct tb_client *c = s->cc->client;

	if (s->reserved && !dec_if_positive(&c->moved))
		__atomic_fetch_sub(&c->res_armed, 1, __ATOMIC_RELAXED);
	else
		__atomic_fetch_sub(&c->user->armed, 1, __ATOMIC_RELAXED);
	s->reserved = 0;
}

/* @s is no longer pending: its client's count, and its quota. */
static void pending_dec(struct tb_slot *s)
{
	struct tb_cc *cc = s->cc;

	cc->npending--;
	tb_stat_set(&cc->st.pending, cc->npending);
	user_put(s);
}

/*
 * One more pending timer for @cc's client, against max_timers_per_user.
 * An ARM marked CTL_ARM_RESERVED (a POSIX timer: its id was reserved at
 * timer_create, where EAGAIN is POSIX's) is pending on one of the
 * client's reserved ids while it has one free; any other counts on its
 * user when armed (no share is set aside per client: max_clients_per_user
 * processes can each arm timers). False when the user's reserved ids and
 * armed timers reach max_timers_per_user: the ARM gets EAGAIN. A
 * reconnecting client's re-arm early after the start is let through
 * (internal.h).
 */
static bool user_take(struct tb_cc *cc, struct tb_slot *s, const struct timerrec *t)
{
	const struct timer_bases *tb = cc->base->tb;
	struct tb_client *c = cc->client;
	uint64_t *armed = &c->user->armed;
	uint64_t max = tb->p.max_timers_per_user;
	uint64_t r;

	if (t->flags & CTL_ARM_RESERVED) {
		r = __atomic_load_n(&c->res_armed, __ATOMIC_RELAXED);
		while (r < __atomic_load_n(&c->reserved, __ATOMIC_RELAXED))
			if (__atomic_compare_exchange_n(&c->res_armed, &r, r + 1, true, __ATOMIC_RELAXED,
							__ATOMIC_RELAXED)) {
				s->reserved = 1;
				return true;
			}
	}
	r = __atomic_add_fetch(armed, 1, __ATOMIC_RELAXED);
	if (!max || r + __atomic_load_n(&c->user->reserved, __ATOMIC_RELAXED) <= max)
		return true;
	if ((t->flags & CTL_ARM_REARM) &&
	    (uint64_t)kclock_ns(CLOCK_MONOTONIC) - tb->start_kns < TB_REARM_GRACE_NS)
		return true;
	__atomic_fetch_sub(armed, 1, __ATOMIC_RELAXED);
	return false;
}

/*
 * An ns timer's place in its heap: its deadline @dl less its client's
 * lead (tb_client_lead), which s->early keeps, so that the heap's order
 * is the order of the hand-overs and its top says when to wake.
 */
static uint64_t heap_key(struct tb_slot *s, uint64_t dl)
{
	uint64_t lead = __atomic_load_n(&s->cc->client->lead_ns, __ATOMIC_RELAXED);

	if (s->cc->self_wakes)
		lead = wake_lead(lead, s->cc->base->wake_p99_ns);

	if (lead > dl)
		lead = dl;
	s->early = (uint32_t)lead;
	return dl - lead;
}

/* Disarm @s wherever it is pending and void its undelivered record. */
static void slot_stop(struct tb_cc *cc, struct tb_slot *s)
{
	struct tb_base *b = cc->base;

	switch (s->kind) {
	case TB_JIFFIES:
		wheel_del(&b->wheel, &s->u.w);
		break;
	case TB_MONO:
	case TB_REAL:
		hrheap_del(heap_of(b, s->kind), &s->u.h);
		break;
	default:
		return;
	}
	s->kind = TB_NONE;
	pending_dec(s);
}

/* ---- submissions ---- */

static unsigned kind_of_clock(uint8_t clock)
{
	return clock == CTL_CLOCK_JIFFIES ? TB_JIFFIES : clock == CTL_CLOCK_MONOTONIC ? TB_MONO : TB_REAL;
}

/* The absolute expiry of an ARM: relative ones count from now on their
 * clock (the page's jiffies_64, or the clockd clock). */
static int arm_expiry(const struct timer_bases *tb, const struct timerrec *t, unsigned kind, uint64_t *exp)
{
	uint64_t now;
	int r;

	if (t->flags & CTL_ARM_ABSTIME) {
		*exp = t->expires;
		return 0;
	}
	if (kind == TB_JIFFIES) {
		now = tb->p.clock.jiffies(tb->p.clock.ctx);
	} else {
		r = clock_now(tb, kind, &now);
		if (r < 0)
			return r;
	}
	*exp = sat_add(now, t->expires);
	return 0;
}

/* Whether @exp had passed at the arm. Lateness counts from the expiry,
 * or from the arm when it came after: an ARM for a deadline years ago
 * is not a timer the base ran years late (clockctl timers once showed a
 * late max of 759384032 s). */
static bool arm_past(const struct timer_bases *tb, unsigned kind, uint64_t exp)
{
	uint64_t now;

	if (kind == TB_JIFFIES)
		return exp < tb->p.clock.jiffies(tb->p.clock.ctx);
	return clock_now(tb, kind, &now) == 0 && exp < now;
}

/* ARM: a pending timer is moved (the kernel's mod_timer). On failure the
 * timer is left not pending, as the ERROR record says. */
static void arm(struct tb_cc *cc, const struct timerrec *t)
{
	struct tb_base *b = cc->base;
	unsigned kind = kind_of_clock(t->clock);
	struct tb_slot *s = tb_slot_get(cc, t->timer_id, true);
	uint64_t exp;
	int r;

	if (!s) {
		oom_note(cc, "a chunk of timer slots");
		tb_deliver_error(cc, t->timer_id, t->gen, ENOMEM);
		return;
	}
	slot_stop(cc, s);
	tb_backlog_void(cc, s);
	r = arm_expiry(cc->base->tb, t, kind, &exp);
	if (r < 0) {
		tb_deliver_error(cc, t->timer_id, t->gen, -r);
		return;
	}
	if (!user_take(cc, s, t)) {
		tb_deliver_error(cc, t->timer_id, t->gen, EAGAIN);
		return;
	}
	memset(&s->u, 0, sizeof(s->u));
	if (kind == TB_JIFFIES) {
		wheel_add(&b->wheel, &s->u.w, exp);
	} else if (hrheap_add(heap_of(b, kind), &s->u.h, heap_key(s, exp)) < 0) {
		user_put(s);
		oom_note(cc, "the deadline heap");
		tb_deliver_error(cc, t->timer_id, t->gen, ENOMEM);
		return;
	}
	s->kind = (uint8_t)kind;
	s->past = arm_past(b->tb, kind, exp);
	s->gen = t->gen;
	s->period = t->flags & CTL_ARM_PERIODIC ? t->period : 0;
	s->folded = 0;
	s->paid = 0;
	s->lag = 0;
	/* Shorter periods cost the daemon more than they can be worth: they
	 * run at the shortest one allowed (timer_min_period_us). */
	if (s->period && kind != TB_JIFFIES && s->period < b->tb->p.min_period_ns)
		s->period = b->tb->p.min_period_ns;
	pending_inc(cc);
	oom_over(cc);
}

/* CANCEL: whatever generation is pending under the id (the client may
 * have re-armed it elsewhere since; it drops stale records itself). */
static void cancel(struct tb_cc *cc, const struct timerrec *t)
{
	struct tb_slot *s = tb_slot_get(cc, t->timer_id, false);

	if (!s)
		return;
	slot_stop(cc, s);
	tb_backlog_void(cc, s);
}

void tb_cc_submit(struct tb_cc *cc, const struct ring_rec *r)
{
	struct ctl_limits lim = {
		.ncpus = TIMER_SHM_MAX_CPUS,
		.max_timers = __atomic_load_n(&cc->client->max_timers, __ATOMIC_RELAXED),
	};
	struct timerrec t;
	char why[96];

	if (cc->broken)
		return;
	/* The client's first record on this CPU (its ring or the socket's):
	 * map its rings in at once (10 us when the library did so first, as
	 * it does), not a page fault every 128 records in delivery. */
	if (!cc->prefaulted) {
		ring_prefault(&cc->sub);
		ring_prefault(&cc->deliv);
		cc->prefaulted = true;
	}
	if (timerrec_decode_sub(r, &lim, &t, why, sizeof(why)) < 0) {
		uint32_t id = timerrec_timer_id(r);
		struct tb_slot *s = tb_slot_get(cc, id, false);

		log_debug("timer base %u: client pid %d: %s", cc->base->cpu, (int)cc->client->pid, why);
		/* The ERROR says the id is not pending: make it so. */
		if (s) {
			slot_stop(cc, s);
			tb_backlog_void(cc, s);
		}
		tb_deliver_error(cc, id, timerrec_gen(r), EINVAL);
		return;
	}
	if (t.op == TREC_ARM)
		arm(cc, &t);
	else
		cancel(cc, &t);
}

void tb_cc_drain(struct tb_cc *cc)
{
	struct ring_rec buf[POP_BATCH];
	unsigned done = 0;
	int n;

	cc->sub_more = false;
	while (!cc->broken) {
		if (done >= TB_SUB_BUDGET) {
			cc->sub_more = true;
			return;
		}
		n = ring_pop_batch(&cc->sub, buf, POP_BATCH);
		if (n < 0)
			tb_cc_break(cc, "submission ring");
		if (n <= 0)
			return;
		for (int i = 0; i < n; i++)
			tb_cc_submit(cc, &buf[i]);
		done += (unsigned)n;
		tb_expire_due(cc->base);
	}
}

void tb_cc_clear(struct tb_cc *cc)
{
	for (uint32_t c = 0; c < cc->nchunks; c++) {
		struct tb_slot *chunk = cc->chunk[c];

		if (!chunk)
			continue;
		for (uint32_t i = 0; i < TB_CHUNK_SLOTS && cc->npending; i++)
			slot_stop(cc, &chunk[i]);
		free(chunk);
		cc->chunk[c] = NULL;
	}
	tb_backlog_free(cc);
}

/* ---- expiry ---- */

void tb_expire_due(struct tb_base *b)
{
	bool clock_err;

	if ((uint64_t)kclock_ns(CLOCK_MONOTONIC) < b->ns_due_kns)
		return;
	tb_expire_ns(b);
	for (struct tb_cc *cc = b->clients; cc; cc = cc->next)
		tb_cc_wake(cc);
	b->ns_due_kns = tb_ns_deadline(b, &clock_err);
	/* Let the clients just woken run: their delivery threads are pinned
	 * to this CPU, at SCHED_FIFO maybe at our own priority, which would
	 * otherwise wait for the whole drain. */
	sched_yield();
}


/*
 * The client's expiry budget (a generic cell rate: max_expiries_per_sec a
 * second, bursts of a tenth of a second's worth), taken by every expiry,
 * periodic or one-shot, jiffies or ns, armed on the ring or the socket, at
 * kernel CLOCK_MONOTONIC @kmono: true and spent; or false, over budget,
 * with *@when the kernel time of the next token, reserved for the caller:
 * the timers over budget queue up a token apart, each moved once and paid
 * (slot.paid) when its turn comes, before any newcomer (moving them all
 * to the first token instead would have every one re-sorted at every
 * token, and let a timer re-armed at once take every token back). The
 * turns are rounded up to TB_BUDGET_QUANTUM_NS of kernel time, the same
 * for every client of the base: one wake-up serves a batch of them.
 */
static bool budget_take(struct tb_cc *cc, uint64_t kmono, uint64_t *when)
{
	uint32_t rate = cc->base->tb->p.max_expiries_per_sec;
	uint64_t step, burst = NSEC_PER_SEC / 10, tat;

	if (!rate)
		return true;
	step = NSEC_PER_SEC / rate ? NSEC_PER_SEC / rate : 1;
	tat = cc->budget_tat > kmono ? cc->budget_tat : kmono;
	cc->budget_tat = sat_add(tat, step);
	if (tat - kmono > burst) {
		*when = round_up(tat - burst, TB_BUDGET_QUANTUM_NS);
		return false;
	}
	return true;
}

bool tb_cc_over_budget(const struct tb_cc *cc, uint64_t kmono)
{
	return cc->base->tb->p.max_expiries_per_sec && cc->budget_tat > sat_add(kmono, NSEC_PER_SEC / 10);
}

/* Whether @s may expire now: its turn was paid for, or the budget has a
 * token; if not, *@when is its turn (budget_take). */
static bool may_expire(struct tb_slot *s, uint64_t kmono, uint64_t *when)
{
	if (s->paid) {
		s->paid = 0;
		return true;
	}
	if (budget_take(s->cc, kmono, when))
		return true;
	s->paid = 1;
	return false;
}

/* @skipped more periods of @s folded into its next FIRE's overrun. */
static void fold(struct tb_slot *s, uint64_t skipped)
{
	s->folded = skipped > UINT32_MAX - s->folded ? UINT32_MAX : s->folded + (uint32_t)skipped;
}

/* A jiffies timer whose client is over budget: as defer_over_budget, in
 * jiffies. */
static void defer_jiffies(struct wheel *w, struct tb_slot *s, uint64_t exp, uint64_t kmono, uint64_t when)
{
	struct tb_base *b = s->cc->base;
	uint64_t until = sat_add(b->tick_jiffies, (when - kmono) / b->tb->jiffy_ns + 1), next;

	if (!s->period || until <= exp) {
		/* A one-shot at its turn; a period that comes after it kept. */
		wheel_add(w, &s->u.w, until > exp ? until : exp);
		return;
	}
	fold(s, periodic_step(&exp, s->period, until, &next) + 1);
	if (next != UINT64_MAX) {
		wheel_add(w, &s->u.w, next);
	} else {
		s->kind = TB_NONE;
		pending_dec(s);
	}
}

static void fire_jiffies(struct wheel *w, struct wheel_timer *wt, void *arg)
{
	struct tb_base *b = arg;
	struct tb_slot *s = SLOT_OF(wt, u.w);
	uint64_t exp = wt->expires, next, overrun = 0;
	uint64_t tick_kns = __atomic_load_n(&b->tb->tick_kns, __ATOMIC_RELAXED);
	uint64_t back = (b->tick_jiffies - exp) * b->tb->jiffy_ns, kns = (uint64_t)kclock_ns(CLOCK_MONOTONIC);
	uint64_t when;

	if (!may_expire(s, kns, &when)) {
		defer_jiffies(w, s, exp, kns, when);
		return;
	}
	if (s->period) {
		overrun = periodic_step(&exp, s->period, b->tick_jiffies, &next);
		back = (b->tick_jiffies - exp) * b->tb->jiffy_ns;
		if (next != UINT64_MAX) {
			wheel_add(w, wt, next);
		} else {
			s->kind = TB_NONE;
			pending_dec(s);
		}
	} else {
		s->kind = TB_NONE;
		pending_dec(s);
	}
	/* Lateness: from when the page reached @exp, estimated back from the
	 * tick that made us run. */
	tb_hist_add(b, !s->past && kns > tick_kns - back ? kns - (tick_kns - back) : 0);
	s->past = 0;
	fire(s, exp, overrun, 0);
	/* Still over budget: its turn now (defer_early). */
	if (s->kind != TB_NONE && s->period && tb_cc_over_budget(s->cc, kns) && !may_expire(s, kns, &when))
		defer_jiffies(w, s, wt->expires, kns, when);
	/* A tick can make thousands of jiffies timers due (a client that
	 * keeps its whole quota a few ticks ahead): an ns timer that comes
	 * due meanwhile is run between them, not after them all. */
	if (kns >= b->ns_due_kns)
		tb_expire_due(b);
}

/* Also when nothing is due: the wheel places a new timer by its distance
 * from the wheel's clock, so a clock left behind (an idle base) would put
 * a near timer at a coarse level, late by that level's granularity. A
 * stretch with nothing due costs a few bitmap checks. */
void tb_expire_jiffies(struct tb_base *b)
{
	uint64_t j = __atomic_load_n(&b->tb->tick_jiffies, __ATOMIC_SEQ_CST);

	b->tick_jiffies = j;
	wheel_expire(&b->wheel, j, fire_jiffies, b);
}

/*
 * @s, due at @now on its heap's clock, finds its client over budget until
 * kernel time @when (@kmono now), its turn (budget_take). Every period
 * passed over is folded into
 * the overrun of the expiry after, as the kernel folds an itimer's missed
 * periods. A one-shot is served late: it moves to its turn, and its FIRE
 * says when it was served, so a client re-arming one-shots from their
 * callbacks (mod_timer(t, jiffies + 1)) gets its budget and no more.
 */
static void defer_over_budget(struct hrheap *h, struct tb_slot *s, uint64_t now, uint64_t kmono,
			      uint64_t when)
{
	uint64_t exp = s->u.h.deadline + s->early, until = sat_add(now, when - kmono), next;

	uint64_t target = until > exp ? until : exp;

	/* A turn is taken when it comes, with no lead. */
	s->early = 0;
	if (!s->period) {
		hrheap_update(h, &s->u.h, target);
		return;
	}
	/* At its turn, as the last period before it (lag: how far before),
	 * so that the turns of a batch share one wake-up; periods passed
	 * over before that one are folded. */
	fold(s, periodic_step(&exp, s->period, target, &next));
	if (target - exp <= UINT32_MAX && target <= INT64_MAX) {
		s->lag = (uint32_t)(target - exp);
		hrheap_update(h, &s->u.h, target);
	} else if (next <= INT64_MAX) {
		fold(s, 1);
		hrheap_update(h, &s->u.h, heap_key(s, next));
	} else {
		hrheap_del(h, &s->u.h);
		s->kind = TB_NONE;
		pending_dec(s);
	}
}

/* Expiry @exp of a @kind timer on CLOCKD_MONOTONIC, its clock reading
 * @now when CLOCKD_MONOTONIC read @mono (0: not read); 0 if unknown. */
static uint64_t due_mono(unsigned kind, uint64_t exp, uint64_t now, uint64_t mono)
{
	if (kind == TB_MONO)
		return exp;
	return mono != 0 && now >= mono && exp > now - mono ? exp - (now - mono) : 0;
}

/*
 * defer_early: a periodic timer that expires while its client is over
 * budget would find it so at its next period too, waking the base only to
 * be deferred: it takes its turn (budget_take) as it expires instead, its
 * next period folded in as if it had come due. A client over budget then
 * costs a wake-up per batch of turns, not one per period of each timer.
 */
static void expire_heap(struct tb_base *b, unsigned kind)
{
	struct hrheap *h = heap_of(b, kind);
	struct hrheap_node *node;
	uint64_t now, next, exp, overrun, kmono, when, late, dl, mono = 0;

	if (hrheap_count(h) == 0 || clock_now(b->tb, kind, &now) < 0)
		return;
	/* A realtime expiry's due on CLOCKD_MONOTONIC (tb_deliver), at the
	 * clocks' offset now. A client that expected it at the offset before
	 * a step of the date finds it due sooner (and is woken for it) or
	 * later (it wakes by itself first, finds nothing and waits to be
	 * woken). */
	if (kind == TB_REAL && clock_now(b->tb, TB_MONO, &mono) < 0)
		mono = 0;
	kmono = (uint64_t)kclock_ns(CLOCK_MONOTONIC);
	/* Expired its client's lead early (heap_key): the client waits out
	 * the rest on the clock itself before it notifies (timerrec.h), so
	 * the hand-over to it happens while the deadline approaches instead
	 * of after it. */
	while ((node = hrheap_peek(h)) && node->deadline <= now) {
		struct tb_slot *s = SLOT_OF(node, u.h);

		if (!may_expire(s, kmono, &when)) {
			defer_over_budget(h, s, now, kmono, when);
			continue;
		}
		/* Lateness from its deadline: a turn over budget (lag) is not. */
		dl = node->deadline + s->early;
		late = now > dl ? now - dl : 0;
		exp = dl - s->lag;
		s->lag = 0;
		overrun = 0;
		if (s->period) {
			/* Only periods whose expiry has passed are missed. */
			overrun = periodic_step(&exp, s->period, now > exp ? now : exp, &next);
			if (next <= INT64_MAX) {
				hrheap_update(h, node, heap_key(s, next));
			} else {
				hrheap_del(h, node);
				s->kind = TB_NONE;
				pending_dec(s);
			}
		} else {
			hrheap_del(h, node);
			s->kind = TB_NONE;
			pending_dec(s);
		}
		tb_hist_add(b, s->past ? 0 : late);
		s->past = 0;
		fire(s, exp, overrun, due_mono(kind, exp, now, mono));
		/* Still over budget: its turn now (defer_early). */
		if (s->kind != TB_NONE && s->period && tb_cc_over_budget(s->cc, kmono) &&
		    !may_expire(s, kmono, &when))
			defer_over_budget(h, s, now, kmono, when);
	}
}

void tb_expire_ns(struct tb_base *b)
{
	expire_heap(b, TB_MONO);
	expire_heap(b, TB_REAL);
}

uint64_t tb_ns_deadline(struct tb_base *b, bool *err)
{
	uint64_t best = UINT64_MAX, kns = 0, now;
	unsigned kinds[] = { TB_MONO, TB_REAL };

	*err = false;
	for (unsigned i = 0; i < 2; i++) {
		struct hrheap_node *node = hrheap_peek(heap_of(b, kinds[i]));
		uint64_t at;

		if (!node)
			continue;
		if (clock_now(b->tb, kinds[i], &now) < 0) {
			*err = true;
			continue;
		}
		if (!kns)
			kns = (uint64_t)kclock_ns(CLOCK_MONOTONIC);
		/* What is left on the clockd clock, from now on the kernel's:
		 * if the clockd clock runs slower, the wake-up finds some left
		 * and sleeps again for it (converging, never early). */
		at = node->deadline > now ? node->deadline - now : 0;
		at = sat_add(kns, at);
		if (at < best)
			best = at;
	}
	return best;
}

/* ---- lateness histogram: 4 buckets per power of two ---- */

static unsigned hist_bucket(uint64_t v)
{
	unsigned e, b;

	if (v < 4)
		return (unsigned)v;
	e = 63u - (unsigned)__builtin_clzll(v);
	b = 4 + (e - 2) * 4 + (unsigned)((v >> (e - 2)) & 3);
	return b < TB_HIST_BUCKETS ? b : TB_HIST_BUCKETS - 1;
}

/* The largest value bucket @b holds. */
static uint64_t hist_top(unsigned b)
{
	unsigned e, sub;

	if (b < 4)
		return b;
	e = (b - 4) / 4 + 2;
	sub = (b - 4) % 4;
	return ((uint64_t)(4 + sub + 1) << (e - 2)) - 1;
}

void tb_hist_add(struct tb_base *b, uint64_t late_ns)
{
	tb_stat_add(&b->st.hist[hist_bucket(late_ns)], 1);
	if (late_ns > tb_stat_get(&b->st.late_max))
		tb_stat_set(&b->st.late_max, late_ns);
}

uint64_t tb_hist_quantile(const struct tb_base_stats *st, double q)
{
	uint64_t total = 0, seen = 0, want, max = tb_stat_get(&st->late_max);

	for (unsigned i = 0; i < TB_HIST_BUCKETS; i++)
		total += tb_stat_get(&st->hist[i]);
	if (total == 0)
		return 0;
	want = (uint64_t)(q * (double)total);
	if (want < 1)
		want = 1;
	for (unsigned i = 0; i < TB_HIST_BUCKETS; i++) {
		seen += tb_stat_get(&st->hist[i]);
		if (seen >= want)
			return hist_top(i) < max ? hist_top(i) : max;
	}
	return max;
}
