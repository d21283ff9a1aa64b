/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The time page's two-copy latch (see <clockd/page.h>), in C11 terms
 * (Boehm, "Can seqlocks get along with programming language memory
 * models?", 2012). Every shared field is accessed with an atomic operation,
 * so the pattern is race-free for the C memory model and for TSan.
 */
#ifndef CLOCKD_SHARED_LATCH_H
#define CLOCKD_SHARED_LATCH_H

#include <stddef.h>
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
	 * acquire fence of clockd_page_read_retry()). */
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
/* The same, storing @tag into @tags[i] (the writer's private word of copy
 * i) with each copy, under the same sequence count. */
void latch_publish_tagged(struct clockd_page *pg, const struct clockd_page_data *d, const void **tags,
			  const void *tag);

/* Reader side: clockd_page_read_begin() and clockd_page_read_retry() of
 * <clockd/page.h>, the one latch reader of the tree. */

/* A consistent snapshot of the whole data block. */
void latch_snapshot(const struct clockd_page *pg, struct clockd_page_data *out);

/*
 * A plain sequence count (odd while the one writer is at work), for the
 * page's device table (dev_seq). Readers retry while it is odd or moved;
 * the data is copied in 64-bit words with relaxed atomics on both sides,
 * so the pattern is race-free for the C memory model (Boehm 2012).
 */
static inline uint32_t seqcount_write_begin(uint32_t *seq)
{
	uint32_t s = LOAD_RELAXED(seq);

	STORE_RELAXED(seq, s + 1);
	/* Orders the odd count before the data stores (pairs with the
	 * reader's acquire fence in seqcount_read_retry). */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	return s;
}

static inline void seqcount_write_end(uint32_t *seq, uint32_t s)
{
	__atomic_store_n(seq, s + 2, __ATOMIC_RELEASE);
}

static inline uint32_t seqcount_read_begin(const uint32_t *seq)
{
	return __atomic_load_n(seq, __ATOMIC_ACQUIRE);
}

static inline int seqcount_read_retry(const uint32_t *seq, uint32_t s)
{
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return (s & 1) || LOAD_RELAXED(seq) != s;
}

/* Copy @nwords 64-bit words with relaxed atomic stores (to a shared
 * structure) or loads (from one). Both must be 8-byte aligned. */
void latch_store_words(void *dst, const void *src, size_t nwords);
void latch_load_words(void *dst, const void *src, size_t nwords);

#endif
