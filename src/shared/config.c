/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "shared/config.h"
#include "shared/tickmath.h"

#define FIELD(f) offsetof(struct clockd_config, f), sizeof(((struct clockd_config *)0)->f)

static const char *const source_choices[] = { "auto", "tsc", "posix", NULL };
static const char *const posix_clock_choices[] = {
	"monotonic_raw", "monotonic", "boottime", "realtime", "tai", NULL
};
static const char *const tick_choices[] = { "timerfd", NULL };
static const char *const log_level_choices[] = { "error", "warning", "notice", "info", "debug", NULL };

const struct config_key config_table[] = {
	{ "hz", CFG_UINT, "1000", CLOCKD_HZ_MIN, CLOCKD_HZ_MAX, NULL, FIELD(hz),
	  "ticks per second: jiffies_64 advances at this rate" },
	{ "jiffies_wrap_after", CFG_UINT, "300", 0, UINT32_MAX, NULL, FIELD(jiffies_wrap_after),
	  "seconds after the first start at which the 32-bit jiffies wrap (INITIAL_JIFFIES)" },
	{ "source", CFG_CHOICE, "auto", 0, 0, source_choices, FIELD(source),
	  "clocksource: auto (tsc if the CPU has an invariant TSC, else posix), tsc or posix" },
	{ "posix_clock", CFG_CHOICE, "monotonic_raw", 0, 0, posix_clock_choices, FIELD(posix_clock),
	  "the kernel clock the posix source reads" },
	{ "tick", CFG_CHOICE, "timerfd", 0, 0, tick_choices, FIELD(tick),
	  "tick device that wakes the daemon HZ times a second" },
	{ "page", CFG_PATH, "/run/clockd/page", 0, 0, NULL, FIELD(page),
	  "path of the shared time page (clients: $CLOCKD_SHM)" },
	{ "stale_after_ms", CFG_UINT, "100", 1, 3600000, NULL, FIELD(stale_after_ms),
	  "readers call the page stale when not updated for this long (at least 3 ticks)" },
	{ "tsc_calibrate_ms", CFG_UINT, "100", 10, 10000, NULL, FIELD(tsc_calibrate_ms),
	  "first measurement of the TSC rate against CLOCK_MONOTONIC_RAW, in ms" },
	{ "log_level", CFG_CHOICE, "info", 0, 0, log_level_choices, FIELD(log_level),
	  "error, warning, notice, info or debug" },
};
const size_t config_table_len = sizeof(config_table) / sizeof(config_table[0]);

const struct config_key *config_find(const char *name)
{
	for (size_t i = 0; i < config_table_len; i++)
		if (strcmp(config_table[i].name, name) == 0)
			return &config_table[i];
	return NULL;
}

/* Parse and store one value. 0, or -1 with "why" (without the key). */
static int key_set(const struct config_key *k, struct clockd_config *cfg, const char *v,
		   char *why, size_t len)
{
	char *field = (char *)cfg + k->offset;

	switch (k->type) {
	case CFG_UINT: {
		unsigned long long n;
		char *end;

		if (!isdigit((unsigned char)*v)) {
			snprintf(why, len, "'%s' is not a number", v);
			return -1;
		}
		errno = 0;
		n = strtoull(v, &end, 10);
		if (*end) {
			snprintf(why, len, "'%s' is not a number", v);
			return -1;
		}
		if (errno == ERANGE || n < k->min || n > k->max) {
			snprintf(why, len, "%s is out of range %llu..%llu", v,
				 (unsigned long long)k->min, (unsigned long long)k->max);
			return -1;
		}
		if (k->size == sizeof(uint32_t)) {
			uint32_t n32 = (uint32_t)n;
			memcpy(field, &n32, sizeof(n32));
		} else {
			uint64_t n64 = n;
			memcpy(field, &n64, sizeof(n64));
		}
		return 0;
	}
	case CFG_CHOICE:
		for (const char *const *c = k->choices; *c; c++) {
			if (strcmp(*c, v) == 0) {
				snprintf(field, k->size, "%s", v);
				return 0;
			}
		}
		{
			size_t o = (size_t)snprintf(why, len, "'%s' is not one of:", v);

			for (const char *const *c = k->choices; *c && o < len; c++)
				o += (size_t)snprintf(why + o, len - o, " %s", *c);
		}
		return -1;
	case CFG_PATH:
		if (v[0] != '/') {
			snprintf(why, len, "'%s' is not an absolute path", v);
			return -1;
		}
		if (strlen(v) >= k->size) {
			snprintf(why, len, "path longer than %zu bytes", k->size - 1);
			return -1;
		}
		if (strchr(v, '"')) {
			snprintf(why, len, "'%s' contains a double quote", v);
			return -1;
		}
		snprintf(field, k->size, "%s", v);
		return 0;
	}
	snprintf(why, len, "internal error: bad key type");
	return -1;
}

void config_defaults(struct clockd_config *cfg)
{
	char why[128];

	memset(cfg, 0, sizeof(*cfg));
	for (size_t i = 0; i < config_table_len; i++)
		if (key_set(&config_table[i], cfg, config_table[i].def, why, sizeof(why)) < 0)
			abort(); /* a default that fails its own check is our bug */
}

int config_set(struct clockd_config *cfg, const char *key, const char *value, char *why, size_t len)
{
	const struct config_key *k = config_find(key);
	char reason[200];

	if (!k) {
		snprintf(why, len, "%s: unknown key", key);
		return -1;
	}
	if (key_set(k, cfg, value, reason, sizeof(reason)) < 0) {
		snprintf(why, len, "%s: %s", key, reason);
		return -1;
	}
	return 0;
}

int config_check(const struct clockd_config *cfg, char *why, size_t len)
{
	if ((uint64_t)cfg->hz * cfg->jiffies_wrap_after > UINT32_MAX) {
		snprintf(why, len, "jiffies_wrap_after: %llu s at hz %u exceeds the 32-bit jiffies range "
			 "(at most %llu s)", (unsigned long long)cfg->jiffies_wrap_after, cfg->hz,
			 (unsigned long long)(UINT32_MAX / cfg->hz));
		return -1;
	}
	return 0;
}

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

/* Split "key = value # comment" in place. 0 ok (key NULL for a blank
 * line), -1 with why (and *key set when the line has one). */
static int split_line(char *line, char **key, char **val, char *why, size_t len)
{
	char *eq, *v, *hash;

	*key = *val = NULL;
	line = trim(line);
	if (!*line || *line == '#')
		return 0;
	eq = strchr(line, '=');
	if (!eq) {
		snprintf(why, len, "expected 'key = value'");
		return -1;
	}
	*eq = '\0';
	*key = trim(line);
	if (!**key || strspn(*key, "abcdefghijklmnopqrstuvwxyz0123456789_") != strlen(*key)) {
		snprintf(why, len, "'%s' is not a key name", *key);
		*key = NULL;
		return -1;
	}
	v = trim(eq + 1);
	if (*v == '"') {
		char *q = strchr(v + 1, '"');

		if (!q) {
			snprintf(why, len, "unterminated quoted value");
			return -1;
		}
		*q = '\0';
		if (*trim(q + 1) && *trim(q + 1) != '#') {
			snprintf(why, len, "text after the quoted value");
			return -1;
		}
		*val = v + 1;
		return 0;
	}
	hash = strchr(v, '#');
	if (hash)
		*hash = '\0';
	*val = trim(v);
	if (!**val) {
		snprintf(why, len, "empty value");
		return -1;
	}
	return 0;
}

int config_load(struct clockd_config *cfg, const char *path, FILE *errs)
{
	struct clockd_config next = *cfg;
	unsigned seen[sizeof(config_table) / sizeof(config_table[0])] = { 0 }; /* line of each key */
	char line[1024], why[256];
	unsigned lineno = 0;
	int errors = 0;
	FILE *f = fopen(path, "re");

	if (!f) {
		if (errs)
			fprintf(errs, "%s: cannot open: %s\n", path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		char *key, *val;
		const struct config_key *k;

		lineno++;
		if (!strchr(line, '\n') && !feof(f)) {
			int ch;

			while ((ch = fgetc(f)) != EOF && ch != '\n')
				;
			if (errs)
				fprintf(errs, "%s:%u: line longer than %zu bytes\n", path, lineno, sizeof(line) - 2);
			errors++;
			continue;
		}
		if (split_line(line, &key, &val, why, sizeof(why)) < 0) {
			if (errs && key)
				fprintf(errs, "%s:%u: %s: %s\n", path, lineno, key, why);
			else if (errs)
				fprintf(errs, "%s:%u: %s\n", path, lineno, why);
			errors++;
			continue;
		}
		if (!key)
			continue;
		k = config_find(key);
		if (!k) {
			if (errs)
				fprintf(errs, "%s:%u: %s: unknown key\n", path, lineno, key);
			errors++;
			continue;
		}
		if (seen[k - config_table]) {
			if (errs)
				fprintf(errs, "%s:%u: %s: set more than once\n", path, lineno, key);
			errors++;
			continue;
		}
		seen[k - config_table] = lineno;
		if (key_set(k, &next, val, why, sizeof(why)) < 0) {
			if (errs)
				fprintf(errs, "%s:%u: %s: %s\n", path, lineno, key, why);
			errors++;
		}
	}
	if (ferror(f)) {
		if (errs)
			fprintf(errs, "%s: read error: %s\n", path, strerror(errno));
		errors++;
	}
	fclose(f);
	if (!errors && config_check(&next, why, sizeof(why)) < 0) {
		/* The checks are between hz and jiffies_wrap_after: cite the
		 * line of whichever of them the file set last. */
		unsigned a = seen[config_find("hz") - config_table];
		unsigned b = seen[config_find("jiffies_wrap_after") - config_table];
		unsigned at = a > b ? a : b;

		if (errs && at)
			fprintf(errs, "%s:%u: %s\n", path, at, why);
		else if (errs)
			fprintf(errs, "%s: %s\n", path, why);
		errors++;
	}
	if (errors)
		return -1;
	*cfg = next;
	return 0;
}

void config_write(FILE *out, const struct clockd_config *cfg)
{
	for (size_t i = 0; i < config_table_len; i++) {
		const struct config_key *k = &config_table[i];
		const char *field = (const char *)cfg + k->offset;

		if (k->type == CFG_UINT) {
			uint64_t n = 0;

			if (k->size == sizeof(uint32_t)) {
				uint32_t n32;
				memcpy(&n32, field, sizeof(n32));
				n = n32;
			} else {
				memcpy(&n, field, sizeof(n));
			}
			fprintf(out, "%s = %llu\n", k->name, (unsigned long long)n);
		} else if (k->type == CFG_PATH) {
			fprintf(out, "%s = \"%s\"\n", k->name, field);
		} else {
			fprintf(out, "%s = %s\n", k->name, field);
		}
	}
}
