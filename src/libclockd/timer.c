/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Timer ids, generations and delivery, shared by both flavours, and the
 * kernel-flavoured API (struct clockd_timer, the kernel's timer_list).
 *
 * Ids: the daemon knows a timer by an id below this client's quota. The
 * table maps an id to the timer using it and the id's generation; free ids
 * sit in a bitmap searched from the lowest word that may have one, so the
 * lowest free id is taken first and a search is short. An id is taken at
 * arm time and given back once its timer is neither pending nor running a
 * callback.
 *
 * Generations: every ARM bumps its id's generation (kept in the table, so
 * it survives the id changing hands) and the daemon echoes it in FIRE. A
 * record whose generation is not the id's current one, or for a timer no
 * longer pending, is stale and dropped: so no callback runs after
 * clockd_del_timer() returned 1 or after a re-arm for the old expiry.
 */
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "libclockd/internal.h"
#include "shared/ctlproto.h"
#include "shared/timerrec.h"

/* A quota beyond this is more ids than a client can use; we use these. */
#define MAX_IDS (1u << 24)

struct tslot {
	struct lib_tcore *owner; /* NULL: free */
	uint32_t gen;
};

static struct tslot *slots;
static uint64_t *freemap; /* bit set: id free */
static uint32_t nids, low_word;

/* The callback this thread is running, for EDEADLK. */
static LIB_THREAD struct lib_tcore *in_callback;

/* The table's generation: a timer's id and pending flag mean something
 * only while its epoch is this one (struct lib_tcore). */
static uint32_t lib_epoch = 1;

_Static_assert(sizeof(struct lib_tcore) <= sizeof(((struct clockd_timer *)0)->lib),
	       "timer state fits clockd_timer.lib");

/* The hooks of the flavours other than the kernel one (this file's). */
static const struct lib_tkind_ops *kind_ops[LIB_TK_POSIX + 1];

void lib_tkind_register(enum lib_tkind kind, const struct lib_tkind_ops *ops)
{
	__atomic_store_n(&kind_ops[kind], ops, __ATOMIC_RELEASE);
}

static void table_drop(void);
static bool table_any_pending(void);
static int table_reset(uint32_t max_timers, unsigned *lost);
static unsigned table_rearm(struct lib_conn *c);
static int deliver(struct lib_conn *c, const struct ring_rec *recs, int n);

/* What the connection calls back into the table for: conn.c has no link
 * to this file (tests/layers/deps.sh). */
static const struct lib_conn_ops conn_ops = {
	.deliver = deliver,
	.table_reset = table_reset,
	.table_rearm = table_rearm,
	.table_any_pending = table_any_pending,
	.table_drop = table_drop,
};

static void table_drop(void)
{
	lib_epoch++;
	free(slots);
	free(freemap);
	slots = NULL;
	freemap = NULL;
	nids = 0;
	low_word = 0;
}

static int id_alloc(struct lib_tcore *core);

static bool table_any_pending(void)
{
	uint32_t words = (nids + 63) / 64;

	for (uint32_t w = 0; w < words; w++) {
		uint64_t used = ~freemap[w];

		if (w == words - 1 && nids % 64)
			used &= (1ull << (nids % 64)) - 1;
		for (; used; used &= used - 1) {
			const struct lib_tcore *core = slots[w * 64 + (uint32_t)__builtin_ctzll(used)].owner;

			if (core && lib_core_pending(core))
				return true;
		}
	}
	return false;
}

static int table_reset(uint32_t max_timers, unsigned *lost)
{
	uint32_t n = max_timers > MAX_IDS ? MAX_IDS : max_timers;
	uint32_t words = (n + 63) / 64, oldn = nids, old_epoch = lib_epoch;
	struct tslot *s = calloc(n, sizeof(*s)), *old = slots;
	uint64_t *f = malloc(words * sizeof(*f));

	*lost = 0;
	if (!s || !f) {
		free(s);
		free(f);
		return -ENOMEM;
	}
	memset(f, 0xff, words * sizeof(*f));
	if (n % 64)
		f[words - 1] = (1ull << (n % 64)) - 1;
	free(freemap);
	slots = s;
	freemap = f;
	nids = n;
	low_word = 0;
	/* Ids of the old table mean nothing now (a timer whose callback
	 * runs gives back no id of the new one); the pending timers move
	 * over in id order, so that they keep their relative order. */
	lib_epoch++;
	for (uint32_t i = 0; i < oldn; i++) {
		struct lib_tcore *core = old[i].owner;

		if (!core || !core->pending || core->epoch != old_epoch)
			continue;
		core->has_id = 0;
		if (id_alloc(core) < 0) {
			core->pending = 0;
			(*lost)++;
		}
	}
	free(old);
	return 0;
}

static int id_alloc(struct lib_tcore *core)
{
	uint32_t words = (nids + 63) / 64;

	while (low_word < words && freemap[low_word] == 0)
		low_word++;
	if (low_word == words)
		return -EAGAIN; /* POSIX's errno for a resource limit */
	core->id = low_word * 64 + (uint32_t)__builtin_ctzll(freemap[low_word]);
	freemap[low_word] &= freemap[low_word] - 1;
	slots[core->id].owner = core;
	core->has_id = 1;
	core->epoch = lib_epoch;
	return 0;
}

static bool core_current(const struct lib_tcore *core)
{
	return core->epoch == lib_epoch;
}

bool lib_core_pending(const struct lib_tcore *core)
{
	return core->pending && core_current(core);
}

void lib_core_release(struct lib_tcore *core)
{
	uint32_t id = core->id;

	if (!core->has_id || !core_current(core)) {
		core->has_id = 0;
		return;
	}
	if (core->pending || core->running)
		return;
	slots[id].owner = NULL;
	freemap[id / 64] |= 1ull << (id % 64);
	if (id / 64 < low_word)
		low_word = id / 64;
	core->has_id = 0;
}

int lib_core_take_err(struct lib_tcore *core)
{
	int err = core->err;

	core->err = 0;
	return err;
}

/* @core is pending for @t's expiry: what re-arms it on a new connection. */
static void keep(struct lib_tcore *core, const struct timerrec *t)
{
	core->pending = 1;
	core->periodic = (t->flags & CTL_ARM_PERIODIC) != 0;
	core->expires = t->expires;
	core->period = core->periodic ? t->period : 0;
	core->clock = t->clock;
	core->flags = t->flags;
	core->err = 0;
}

/* Armed while the library reconnects: pending now, armed by the new
 * connection (table_rearm) with the others. */
static int arm_later(struct lib_tcore *core, int cpu, const struct timerrec *t)
{
	int err;

	if (!core_current(core)) {
		core->pending = 0;
		core->has_id = 0;
	}
	if (!core->has_id && (err = id_alloc(core)) < 0)
		return err;
	slots[core->id].gen++;
	keep(core, t);
	if (cpu >= 0)
		core->cpu = cpu;
	return 0;
}

/*
 * The page's jiffies clock (HZ, and jiffies_base at CLOCKD_MONOTONIC
 * jiffies_epoch_ns) of the daemon the timers were armed on. A restarted
 * daemon with another HZ starts a new jiffies epoch: a jiffies timer is
 * carried over in time, not in ticks (a 3 s timer armed at HZ 1000 ran
 * after 30 s at HZ 100), converted to CLOCKD_MONOTONIC at the old HZ and
 * back at the new one, rounded up (never early).
 */
struct jmap {
	uint32_t hz;
	uint64_t base;
	int64_t epoch;
};

static struct jmap armed_jmap; /* hz 0: none yet */

static void jmap_read(struct jmap *m)
{
	int err;
	const struct clockd_page *pg = lib_page(&err);

	memset(m, 0, sizeof(*m));
	if (!pg)
		return;
	m->hz = __atomic_load_n(&pg->hz, __ATOMIC_RELAXED);
	m->base = __atomic_load_n(&pg->jiffies_base, __ATOMIC_RELAXED);
	m->epoch = __atomic_load_n(&pg->jiffies_epoch_ns, __ATOMIC_RELAXED);
	if (m->hz > 100000) /* CLOCKD_HZ_MAX: a page's word we cannot use */
		m->hz = 0;
}

/* Absolute jiffies @j of @o as jiffies of @n: the first tick of @n at or
 * after the time @j began under @o. */
static uint64_t jiffies_carry(uint64_t j, const struct jmap *o, const struct jmap *n)
{
	/* Beyond ~500 years at HZ 1e5 the timer will not run in practice:
	 * left alone rather than overflowed. */
	const uint64_t far = 1ull << 50;
	int64_t ns;
	uint64_t d;

	if (j <= o->base)
		return n->base; /* before the old epoch: long due */
	if (j - o->base > far)
		return j;
	/* Tick k of a page starts floor(k * 1e9 / hz) ns after its epoch
	 * (tick_offset_ns); the first at or after d is ceil(d * hz / 1e9). */
	ns = o->epoch + (int64_t)(((unsigned __int128)(j - o->base) * 1000000000u) / o->hz);
	if (ns <= n->epoch)
		return n->base;
	d = (uint64_t)(ns - n->epoch);
	return n->base + (uint64_t)(((unsigned __int128)d * n->hz + 999999999u) / 1000000000u);
}

static unsigned table_rearm(struct lib_conn *c)
{
	uint64_t served = 0;
	unsigned lost = 0;
	struct jmap now;
	bool carry;

	jmap_read(&now);
	carry = armed_jmap.hz && now.hz &&
		(armed_jmap.hz != now.hz || armed_jmap.base != now.base || armed_jmap.epoch != now.epoch);

	for (uint32_t id = 0; id < nids && c == lib_conn_current(); id++) {
		struct lib_tcore *core = slots[id].owner;
		struct timerrec rec = { .op = TREC_ARM, .timer_id = id };
		int k;

		if (!core || !lib_core_pending(core))
			continue;
		k = lib_conn_index(c, core->cpu);
		if (k < 0 && core->pinned) {
			/* Its CPU is not served now: failed, not moved (a timer
			 * pinned there never runs elsewhere). The timer's next
			 * call says ENXIO, as arming it there now would. */
			core->pending = 0;
			core->err = ENXIO;
			lib_core_release(core);
			continue;
		}
		if (k < 0)
			k = lib_conn_index(c, -1); /* its CPU was the caller's */
		if (carry && core->clock == CTL_CLOCK_JIFFIES)
			core->expires = jiffies_carry(core->expires, &armed_jmap, &now);
		rec.clock = core->clock;
		/* Armed under the previous daemon: the new one lets it past
		 * max_timers_per_user that a newcomer may have filled. */
		rec.flags = core->flags | CTL_ARM_REARM;
		rec.expires = core->expires;
		rec.period = core->period;
		rec.gen = ++slots[id].gen;
		if (lib_conn_submit(c, k, &rec) < 0) {
			if (c != lib_conn_current())
				break; /* lost again: it stays pending */
			core->pending = 0;
			lib_core_release(core);
			lost++;
			continue;
		}
		core->cpu = lib_conn_cpu(c, k);
		served |= 1ull << k;
	}
	if (c == lib_conn_current())
		armed_jmap = now;
	for (int k = 0; served && c == lib_conn_current(); k++, served >>= 1)
		if ((served & 1) && lib_conn_serve(c, k) < 0)
			break; /* the next arming call starts it */
	return lost;
}

/* The connection, or NULL and *@err: ENOTCONN while the library
 * reconnects (not after ECONNRESET: that reports timers lost before). */
static struct lib_conn *conn_get(int *err)
{
	struct lib_conn *c = lib_conn_get(&conn_ops, err);

	if (!c && *err != ECONNRESET && lib_conn_reconnecting())
		*err = ENOTCONN;
	return c;
}

/* lib_core_arm() on the connection, made now if need be; -ENOTCONN
 * with @core as it was when the connection turns out lost (the library
 * reconnects). */
static int arm_now(struct lib_tcore *core, int cpu, const struct timerrec *t)
{
	struct timerrec rec = *t;
	struct lib_conn *c;
	int err, k, oldk = -1;

	c = conn_get(&err);
	if (!c)
		return -err;
	k = lib_conn_index(c, cpu);
	if (k < 0)
		return -ENXIO;
	/* A POSIX timer's id, reserved at timer_create or now: past the
	 * user's quota the arm fails here, not later (its record would). */
	if ((rec.flags & CTL_ARM_RESERVED) && lib_conn_cover(c) == -EAGAIN)
		return -EAGAIN;
	if (!core_current(core)) {
		core->pending = 0;
		core->has_id = 0;
	}
	if (!core->has_id && (err = id_alloc(core)) < 0)
		return err;
	if (core->pending && core->cpu != lib_conn_cpu(c, k))
		oldk = lib_conn_index(c, core->cpu);
	if (oldk >= 0) {
		/* Moving CPUs: the old base must forget it. */
		struct timerrec cancel = { .op = TREC_CANCEL, .timer_id = core->id, .gen = slots[core->id].gen };

		err = lib_conn_submit(c, oldk, &cancel);
		if (err < 0)
			goto err_release;
	}
	rec.op = TREC_ARM;
	rec.timer_id = core->id;
	rec.gen = ++slots[core->id].gen;
	err = lib_conn_submit(c, k, &rec);
	if (err < 0)
		goto err_release;
	keep(core, &rec);
	core->cpu = lib_conn_cpu(c, k);
	return lib_conn_serve(c, k);
err_release:
	if (err == -ECONNRESET && lib_conn_reconnecting())
		return -ENOTCONN;
	core->pending = 0;
	lib_core_release(core);
	return err;
}

int lib_core_claim(void)
{
	return lib_conn_claim();
}

void lib_core_unclaim(void)
{
	lib_conn_unclaim();
}

int lib_core_connect(void)
{
	int err;

	return conn_get(&err) || err == ENOTCONN ? 0 : -err;
}

int lib_core_arm(struct lib_tcore *core, int cpu, const struct timerrec *t)
{
	/* Found lost: once more, which connects again if a daemon is there
	 * (its quota applies), else keeps the timer for the reconnection. */
	int err = arm_now(core, cpu, t);

	if (err == -ENOTCONN)
		err = arm_now(core, cpu, t);
	if (err == -ENOTCONN)
		err = arm_later(core, cpu, t);
	return err;
}

int lib_core_cancel(struct lib_tcore *core)
{
	struct lib_conn *c = lib_conn_current();
	int k, err = 0;

	if (!lib_core_pending(core))
		return 0;
	k = c ? lib_conn_index(c, core->cpu) : -1;
	if (k >= 0) {
		struct timerrec cancel = { .op = TREC_CANCEL, .timer_id = core->id, .gen = slots[core->id].gen };

		err = lib_conn_submit(c, k, &cancel);
	}
	/* Not pending even if the record could not go: a FIRE for it now
	 * finds it not pending and is dropped. */
	core->pending = 0;
	lib_core_release(core);
	return err == -ECONNRESET ? 1 : err < 0 ? err : 1;
}

bool lib_core_in_callback(const struct lib_tcore *core)
{
	return in_callback == core;
}

int lib_core_wait(struct lib_tcore *core)
{
	if (in_callback == core)
		return -EDEADLK;
	while (core->running)
		lib_tlock_wait();
	return 0;
}

/* With lib_tlock held: the timer a delivery record is for, if it is not
 * stale. */
static struct lib_tcore *lookup(const struct timerrec *r)
{
	struct lib_tcore *core;

	if (r->timer_id >= nids)
		return NULL;
	core = slots[r->timer_id].owner;
	if (!core || slots[r->timer_id].gen != r->gen || !lib_core_pending(core))
		return NULL;
	return core;
}

static void run_callback(struct lib_tcore *core, const struct lib_ptimer_note *note)
{
	struct lib_tcore *outer = in_callback;

	in_callback = core;
	if (core->kind == LIB_TK_KERNEL) {
		struct clockd_timer *t =
			(struct clockd_timer *)(void *)((char *)core - offsetof(struct clockd_timer, lib));

		t->fn(t, t->arg);
	} else {
		__atomic_load_n(&kind_ops[core->kind], __ATOMIC_ACQUIRE)->notify(core, note);
	}
	in_callback = outer;
}

/* One record; returns 1 if a callback ran, 0 if not. */
static int deliver_one(struct lib_conn *c, const struct timerrec *rp)
{
	struct lib_ptimer_note note = { 0 };
	struct lib_tcore *core;
	struct timerrec r = *rp;

	lib_tlock_lock_fast();
	core = c == lib_conn_current() ? lookup(&r) : NULL;
	if (!core) {
		lib_tlock_unlock_fast();
		return 0;
	}
	if (r.op == TREC_ERROR || !core->periodic)
		core->pending = 0;
	if (r.op == TREC_ERROR) {
		core->err = r.error == EDQUOT ? EAGAIN : r.error;
		lib_core_release(core);
		lib_tlock_unlock_fast();
		return 0;
	}
	if (core->periodic)
		core->expires = r.expires + core->period; /* what a new connection arms */
	if (core->kind != LIB_TK_KERNEL)
		__atomic_load_n(&kind_ops[core->kind], __ATOMIC_ACQUIRE)->note(core, &r, &note);
	else
		((struct clockd_timer *)(void *)((char *)core - offsetof(struct clockd_timer, lib)))->expires =
			r.expires;
	core->running++;
	lib_tlock_unlock_fast();

	run_callback(core, &note);

	lib_tlock_lock_fast();
	if (--core->running == 0)
		lib_tlock_broadcast();
	lib_core_release(core);
	lib_tlock_unlock_fast();
	return 1;
}

/*
 * A periodic timer whose callback is slow finds several FIREs of the same
 * arm queued (the daemon coalesces only when the ring is full): fold each
 * into the last one of the batch, as POSIX counts expiries that happen
 * while a notification is pending as overruns of the next one.
 */
static void coalesce(struct timerrec *r, bool *skip, int n)
{
	for (int i = 0; i < n; i++) {
		if (r[i].op != TREC_FIRE)
			continue;
		for (int j = i + 1; j < n; j++) {
			if (r[j].op == TREC_FIRE && r[j].timer_id == r[i].timer_id && r[j].gen == r[i].gen) {
				r[j].overrun += 1 + r[i].overrun;
				skip[i] = true;
				break;
			}
		}
	}
}

static int deliver(struct lib_conn *c, const struct ring_rec *recs, int n)
{
	struct timerrec r[LIB_DELIVER_MAX];
	bool skip[LIB_DELIVER_MAX] = { false };
	int ran = 0;

	if (n <= 0 || n > LIB_DELIVER_MAX)
		return n == 0 ? 0 : -EINVAL;
	for (int i = 0; i < n; i++)
		if (timerrec_decode_deliv(&recs[i], &r[i]) < 0)
			return -EPROTO;
	coalesce(r, skip, n);
	for (int i = 0; i < n; i++)
		if (!skip[i])
			ran += deliver_one(c, &r[i]);
	return ran;
}

/* ---- the kernel-flavoured API ---- */

static struct lib_tcore *kcore(struct clockd_timer *t)
{
	return (struct lib_tcore *)(void *)t->lib;
}

static int fail(int err)
{
	errno = err;
	return -1;
}

/* The common end of the calls: unlock, map -errno to -1 + errno. */
static int unlock_ret(int ret)
{
	lib_tlock_unlock_fast();
	return ret < 0 ? fail(-ret) : ret;
}

CLOCKD_EXPORT int clockd_timer_setup(struct clockd_timer *timer, clockd_timer_fn *fn, void *arg)
{
	struct lib_tcore *core;

	if (!timer || !fn)
		return fail(!timer ? EFAULT : EINVAL);
	memset(timer, 0, sizeof(*timer));
	timer->fn = fn;
	timer->arg = arg;
	core = kcore(timer);
	core->cpu = -1;
	core->kind = LIB_TK_KERNEL;
	return 0;
}

/* Arm @t for jiffies @expires on @cpu; @busy: fail if pending. Returns
 * whether it was pending, or -errno. With lib_tlock held. */
static int karm(struct clockd_timer *t, uint64_t expires, int cpu, bool busy)
{
	struct timerrec rec = { .clock = CTL_CLOCK_JIFFIES, .flags = CTL_ARM_ABSTIME, .expires = expires };
	struct lib_tcore *core = kcore(t);
	int was = lib_core_pending(core), err = lib_core_take_err(core);

	if (err)
		return -err;
	if (busy && was)
		return -EBUSY;
	/* add_timer_on() pins it; add_timer() leaves the CPU to the
	 * caller's; mod_timer() keeps what it was. */
	if (busy)
		core->pinned = cpu >= 0;
	err = lib_core_arm(core, cpu, &rec);
	if (err < 0)
		return err;
	t->expires = expires;
	return was;
}

CLOCKD_EXPORT int clockd_add_timer(struct clockd_timer *timer, uint64_t expires)
{
	int r;

	if (!timer)
		return fail(EFAULT);
	lib_tlock_lock_fast();
	r = karm(timer, expires, -1, true);
	return unlock_ret(r < 0 ? r : 0);
}

CLOCKD_EXPORT int clockd_add_timer_on(struct clockd_timer *timer, uint64_t expires, unsigned int cpu)
{
	int r;

	if (!timer)
		return fail(EFAULT);
	if (cpu >= TIMER_SHM_MAX_CPUS)
		return fail(ENXIO);
	lib_tlock_lock_fast();
	r = karm(timer, expires, (int)cpu, true);
	return unlock_ret(r < 0 ? r : 0);
}

CLOCKD_EXPORT int clockd_mod_timer(struct clockd_timer *timer, uint64_t expires)
{
	if (!timer)
		return fail(EFAULT);
	lib_tlock_lock_fast();
	return unlock_ret(karm(timer, expires, kcore(timer)->cpu, false));
}

CLOCKD_EXPORT int clockd_del_timer(struct clockd_timer *timer)
{
	struct lib_tcore *core;
	int err;

	if (!timer)
		return fail(EFAULT);
	core = kcore(timer);
	lib_tlock_lock_fast();
	err = lib_core_take_err(core);
	return unlock_ret(err ? -err : lib_core_cancel(core));
}

CLOCKD_EXPORT int clockd_del_timer_sync(struct clockd_timer *timer)
{
	struct lib_tcore *core;
	int r;

	if (!timer)
		return fail(EFAULT);
	core = kcore(timer);
	lib_tlock_lock_fast();
	if (in_callback == core)
		return unlock_ret(-EDEADLK);
	lib_core_take_err(core);
	/* A callback that re-arms its timer while we wait: again, as the
	 * kernel's del_timer_sync() does. */
	r = lib_core_cancel(core);
	while (r >= 0 && (lib_core_wait(core), lib_core_pending(core)))
		if (lib_core_cancel(core) < 0)
			break;
	lib_core_release(core);
	return unlock_ret(r);
}

CLOCKD_EXPORT int clockd_timer_pending(const struct clockd_timer *timer)
{
	const struct lib_tcore *core;
	int r;

	if (!timer)
		return fail(EFAULT);
	core = (const struct lib_tcore *)(const void *)timer->lib;
	lib_tlock_lock_fast();
	r = lib_core_pending(core);
	lib_tlock_unlock_fast();
	return r;
}
