/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer harness of the control protocol decoder (src/shared/ctlproto.c):
 * any input is decoded; the decoder must not crash or read outside the
 * input, must answer 0, -EPROTO, -EINVAL or -EMSGSIZE, must give a reason
 * for a refusal, and an accepted input must re-encode to exactly its bytes
 * (one encoding per message). Any breach aborts.
 *
 * Not built by make check. From the top source directory:
 *   clang-14 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
 *     -Isrc -Iinclude tests/fuzz/ctlproto-fuzz.c src/shared/ctlproto.c -o ctlproto-fuzz
 *   mkdir -p corpus && ./ctlproto-fuzz -runs=1000000 corpus tests/fuzz/ctlproto-corpus
 * (new inputs go to the first directory, corpus/; the seeds, one valid
 * message of each type for the limits below, are only read).
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/ctlproto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The seeds' ARM and CANCEL fit these: 4 CPUs, a quota of 100 timers. */
static const struct ctl_limits lim = { .ncpus = 4, .max_timers = 100 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned char again[CTL_MSG_MAX];
	struct ctl_msg m;
	char why[128];
	int rc = ctl_decode(data, size, &lim, &m, why, sizeof(why));

	if (rc == 0) {
		if (ctl_encode(&m, again, sizeof(again)) != size || memcmp(again, data, size) != 0) {
			fprintf(stderr, "accepted %s of %zu bytes re-encodes differently\n",
				ctl_type_name(m.type), size);
			abort();
		}
		return 0;
	}
	if (rc != -EPROTO && rc != -EINVAL && rc != -EMSGSIZE) {
		fprintf(stderr, "undocumented error %d (%s)\n", rc, why);
		abort();
	}
	if (!why[0] || !memchr(why, '\0', sizeof(why))) {
		fprintf(stderr, "refusal %d without a reason\n", rc);
		abort();
	}
	return 0;
}
