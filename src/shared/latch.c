/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "shared/latch.h"

#define COPY_FIELDS(X)                                                         \
	X(vclock_mode) X(vclock_clockid) X(cycle_last) X(mask) X(max_cycles)   \
	X(mult) X(shift) X(mono_sec) X(mono_snsec) X(real_sec) X(real_snsec)   \
	X(raw_sec) X(raw_snsec) X(raw_mult) X(xtime_nsec) X(xtime_sec)         \
	X(coarse_mono_sec) X(coarse_mono_nsec) X(jiffies_64)                   \
	X(kernel_mono_ns) X(offset_ns) X(freq_ppb) X(error_bound_ns)           \
	X(rms_offset_ns) X(skew_ppb) X(ref_mono_ns) X(disc_state)         \
	X(leap) X(tai_offset)

void latch_store_data(struct clockd_page_data *dst, const struct clockd_page_data *src)
{
#define X(f) STORE_RELAXED(&dst->f, src->f);
	COPY_FIELDS(X)
#undef X
}

void latch_load_data(struct clockd_page_data *dst, const struct clockd_page_data *src)
{
#define X(f) dst->f = LOAD_RELAXED(&src->f);
	COPY_FIELDS(X)
#undef X
}

void latch_publish_tagged(struct clockd_page *pg, const struct clockd_page_data *d, const void **tags,
			  const void *tag)
{
	/* Readers go to the other copy while we rewrite this one, then back
	 * to it (the release in latch_write_begin publishes the stores
	 * before it) while we bring the other copy up to date. */
	for (int i = 0; i < 2; i++) {
		uint32_t seq;
		struct clockd_page_data *copy = latch_write_begin(pg, &seq);

		latch_store_data(copy, d);
		if (tags)
			STORE_RELAXED(&tags[copy - pg->data], tag);
	}
}

void latch_publish(struct clockd_page *pg, const struct clockd_page_data *d)
{
	latch_publish_tagged(pg, d, NULL, NULL);
}

void latch_snapshot(const struct clockd_page *pg, struct clockd_page_data *out)
{
	const struct clockd_page_data *d;
	uint32_t seq;

	do {
		d = clockd_page_read_begin(pg, &seq);
		latch_load_data(out, d);
	} while (clockd_page_read_retry(pg, seq));
}

void latch_store_words(void *dst, const void *src, size_t nwords)
{
	uint64_t *to = dst;
	const uint64_t *from = src;

	for (size_t i = 0; i < nwords; i++)
		STORE_RELAXED(&to[i], from[i]);
}

void latch_load_words(void *dst, const void *src, size_t nwords)
{
	uint64_t *to = dst;
	const uint64_t *from = src;

	for (size_t i = 0; i < nwords; i++)
		to[i] = LOAD_RELAXED(&from[i]);
}
