/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The time page's two-copy latch (see <clockd/page.h>), in C11 terms
 * (Boehm, "Can seqlocks get along with programming language memory
 * models?", 2012). Every shared field is accessed with an atomic operation,
 * so the pattern is race-free for the C memory model and for TSan.
 */
#ifndef CLOCKD_SHARED_LATCH_H
#define CLOCKD_SHARED_LATCH_H

#include <stdint.h>
#include <clockd/page.h>

#define LOAD_RELAXED(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define STORE_RELAXED(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)

/* Writer side: start an update of the copy readers are not using. Returns
 * that copy. Only one thread of one process writes a page. */
static inline struct clockd_page_data *latch_write_begin(struct clockd_page *pg, uint32_t *seq)
{
	*seq = LOAD_RELAXED(&pg->seq);
	/* Send readers to data[(seq + 1) & 1]; the release fence orders this
	 * store before our stores to the copy they leave (pairs with the
	 * reader's acquire fence before it re-reads seq). */
	__atomic_store_n(&pg->seq, *seq + 1, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	return &pg->data[*seq & 1];
}

/* Copy @src into @dst field by field with relaxed atomic stores. */
void latch_store_data(struct clockd_page_data *dst, const struct clockd_page_data *src);
/* Copy @src out of a page copy with relaxed atomic loads. */
void latch_load_data(struct clockd_page_data *dst, const struct clockd_page_data *src);

/* Publish @d: both copies end up equal to it, readers never wait. */
void latch_publish(struct clockd_page *pg, const struct clockd_page_data *d);

/* Reader side: a consistent snapshot of the whole data block. Never blocks:
 * it retries only while the writer moved on during the copy. */
void latch_snapshot(const struct clockd_page *pg, struct clockd_page_data *out);

#endif
