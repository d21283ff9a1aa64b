/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * clockd.conf: one table (config_table[]) is the single source of truth for
 * every key's name, type, default, range and one-line description. Parsing,
 * validation, `clockd --check-config`, `clockd --help-config` and the
 * documentation test all read it.
 *
 * Syntax: "key = value" lines; '#' starts a comment (whole line or after
 * the value); blank lines ignored; values may be quoted with "..." (no
 * escapes). A key may appear once. Errors read "FILE:LINE: KEY: why".
 */
#ifndef CLOCKD_SHARED_CONFIG_H
#define CLOCKD_SHARED_CONFIG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define CONFIG_DEFAULT_PATH SYSCONFDIR "/clockd.conf"

enum config_type {
	CFG_UINT,   /* unsigned integer in [min, max] */
	CFG_CHOICE, /* one word of choices[] */
	CFG_PATH,   /* absolute path, shorter than the field */
};

struct clockd_config {
	uint32_t hz;                 /* hz */
	uint64_t jiffies_wrap_after; /* jiffies_wrap_after, seconds */
	char source[32];             /* source */
	char posix_clock[32];        /* posix_clock */
	char tick[32];               /* tick */
	char page[256];              /* page */
	uint32_t stale_after_ms;     /* stale_after_ms */
	uint32_t tsc_calibrate_ms;   /* tsc_calibrate_ms */
	char log_level[16];          /* log_level */
};

struct config_key {
	const char *name;
	enum config_type type;
	const char *def;            /* default, as it would be written */
	uint64_t min, max;          /* CFG_UINT */
	const char *const *choices; /* CFG_CHOICE, NULL-terminated */
	size_t offset, size;        /* where in struct clockd_config */
	const char *doc;            /* one line */
};

extern const struct config_key config_table[];
extern const size_t config_table_len;

/* Fill @cfg with every key's default (the embedded default config). */
void config_defaults(struct clockd_config *cfg);

/*
 * Parse @path over a copy of @cfg; on success store the result in @cfg and
 * return 0. On any error return -1, leave @cfg untouched (all or nothing),
 * and write one "FILE:LINE: KEY: why" line per error to @errs (if not NULL).
 * A missing file is an error ("FILE: cannot open: ...").
 */
int config_load(struct clockd_config *cfg, const char *path, FILE *errs);

/* Set one key from text (command line overrides). Returns 0, or -1 with a
 * reason ("KEY: why") in @why. */
int config_set(struct clockd_config *cfg, const char *key, const char *value, char *why, size_t whylen);

/* Checks between keys (e.g. hz * jiffies_wrap_after < 2^32). 0 or -1 with
 * @why. config_load runs it too. */
int config_check(const struct clockd_config *cfg, char *why, size_t whylen);

/* Write every key as "key = value" (a valid config file). */
void config_write(FILE *out, const struct clockd_config *cfg);

const struct config_key *config_find(const char *name);

#endif
