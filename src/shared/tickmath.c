/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <stdlib.h>

#include "shared/tickmath.h"

uint64_t tick_offset_ns(uint64_t k, uint32_t hz)
{
	assert(hz >= CLOCKD_HZ_MIN && hz <= CLOCKD_HZ_MAX);
	return (uint64_t)(((unsigned __int128)k * NSEC_PER_SEC) / hz);
}

uint64_t tick_index(uint64_t d, uint32_t hz)
{
	/* floor(k*1e9/hz) <= d  <=>  k*1e9 < (d+1)*hz  <=>
	 * k <= floor(((d+1)*hz - 1) / 1e9). */
	assert(hz >= CLOCKD_HZ_MIN && hz <= CLOCKD_HZ_MAX);
	return (uint64_t)((((unsigned __int128)d + 1) * hz - 1) / NSEC_PER_SEC);
}

uint32_t tick_period_ns_ceil(uint32_t hz)
{
	return (uint32_t)((NSEC_PER_SEC + hz - 1) / hz);
}

uint64_t initial_jiffies_for(uint32_t hz, uint64_t wrap_s)
{
	return (uint32_t)(0u - (uint32_t)((uint64_t)hz * wrap_s));
}

bool calc_mult_shift(uint64_t freq_hz, uint64_t max_cycles, uint32_t *mult, uint32_t *shift)
{
	if (freq_hz == 0)
		return false;
	for (uint32_t sft = 32; sft > 0; sft--) {
		unsigned __int128 m = (((unsigned __int128)NSEC_PER_SEC << sft) + freq_hz / 2) / freq_hz;
		unsigned __int128 top = ((unsigned __int128)NSEC_PER_SEC << sft) +
					(unsigned __int128)max_cycles * m;

		if (m == 0 || m > UINT32_MAX || top > UINT64_MAX)
			continue;
		*mult = (uint32_t)m;
		*shift = sft;
		return true;
	}
	return false;
}
