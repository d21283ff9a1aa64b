/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * src/shared/config.c: config_load on real files. Every error is one
 * "FILE:LINE: KEY: why" line, every error of a file is reported, a failed
 * load changes nothing, the syntax (comments, quotes) parses, config_write
 * re-loads to the same configuration, and the defaults are the table's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shared/config.h"
#include "tests/tap.h"

static char dir[256];
static char path[300];
static int failures;

/* Count a result; a TODO names a known bug and does not count. */
static void check(bool ok, const char *todo, const char *what)
{
	if (todo)
		tap_ok(ok, "%s # TODO %s", what, todo);
	else if (!tap_ok(ok, "%s", what))
		failures++;
}

static void write_file(const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f || fputs(text, f) < 0 || fclose(f) != 0)
		tap_bail("%s: %s", path, strerror(errno));
}

/* Load @text over @cfg; the error output (malloc'd) in *@errs. */
static int load(struct clockd_config *cfg, const char *text, char **errs)
{
	size_t len;
	FILE *mem = open_memstream(errs, &len);
	int r;

	if (!mem)
		tap_bail("open_memstream: %s", strerror(errno));
	write_file(text);
	r = config_load(cfg, path, mem);
	fclose(mem);
	return r;
}

static int count_lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

static void show(const char *errs)
{
	char buf[1024];

	snprintf(buf, sizeof(buf), "%s", errs);
	for (char *l = strtok(buf, "\n"); l; l = strtok(NULL, "\n"))
		tap_diag("got: %s", l);
}

/* One bad file: load fails, the config is untouched, and the output is
 * exactly one line "PATH:LINE: KEY: why" with @why in it. */
static void bad_file(const char *text, unsigned line, const char *key, const char *why, const char *todo)
{
	struct clockd_config cfg, before;
	char want[400], what[400], *errs = NULL;
	int r;

	snprintf(what, sizeof(what), "line %u: %s: %s", line, key, why);
	config_defaults(&cfg);
	before = cfg;
	r = load(&cfg, text, &errs);
	snprintf(want, sizeof(want), "%s:%u: %s: ", path, line, key);
	if (r != -1 || memcmp(&cfg, &before, sizeof(cfg)) != 0 || count_lines(errs) != 1 ||
	    strncmp(errs, want, strlen(want)) != 0 || !strstr(errs + strlen(want), why)) {
		tap_diag("want: %s...%s...", want, why);
		show(errs);
		check(false, todo, what);
	} else {
		check(true, todo, what);
	}
	free(errs);
}

static void test_errors(void)
{
	bad_file("# a comment\nnokey = 1\n", 2, "nokey", "unknown key", NULL);
	bad_file("hz = abc\n", 1, "hz", "'abc' is not a number", NULL);
	bad_file("hz = -5\n", 1, "hz", "'-5' is not a number", NULL);
	bad_file("hz = 10x\n", 1, "hz", "'10x' is not a number", NULL);
	bad_file("hz = 0\n", 1, "hz", "0 is out of range 1..100000", NULL);
	bad_file("hz = 100001\n", 1, "hz", "100001 is out of range 1..100000", NULL);
	bad_file("hz = 99999999999999999999999\n", 1, "hz", "is out of range 1..100000", NULL);
	bad_file("stale_after_ms = 0\n", 1, "stale_after_ms", "0 is out of range 1..3600000", NULL);
	bad_file("hz = 100\n\nhz = 200\n", 3, "hz", "set more than once", NULL);
	bad_file("source = hpett\n", 1, "source", "'hpett' is not one of: auto tsc hpet phc posix sim", NULL);
	bad_file("source = hpet, posix, hpet\n", 1, "source", "'hpet' is listed twice", NULL);
	bad_file("source = auto, posix\n", 1, "source", "'auto' cannot be combined with other entries", NULL);
	bad_file("tick = gpio,, tsc\n", 1, "tick", "'tsc' is not one of: timerfd hpet rtc gpio sim", NULL);
	bad_file("sim_rate_ppm = -100001\n", 1, "sim_rate_ppm", "-100001 is out of range -100000..100000", NULL);
	bad_file("sim_rate_ppm = 1.5\n", 1, "sim_rate_ppm", "'1.5' is not a number", NULL);
	bad_file("sim_script = \"1s stall; 2s step 0ms\"\n", 1, "sim_script", "'2s step': bad or missing argument", NULL);
	bad_file("sim_script = \"2s miss 1; 1s vanish\"\n", 1, "sim_script", "events must be in time order", NULL);
	bad_file("sim_script = \"1s explode\"\n", 1, "sim_script", "'explode': unknown action", NULL);
	bad_file("sim_script = \"1s late -5ms\"\n", 1, "sim_script", "'1s late': bad or missing argument", NULL);
	bad_file("sim_script = \"1s late 5\"\n", 1, "sim_script", "'1s late': bad or missing argument", NULL);
	bad_file("log_level = loud\n", 1, "log_level", "is not one of: error warning notice info debug", NULL);
	bad_file("page = run/clockd/page\n", 1, "page", "'run/clockd/page' is not an absolute path", NULL);
	bad_file("page = \"/x\" extra\n", 1, "page", "text after the quoted value",
		 NULL);
	bad_file("hz =\n", 1, "hz", "empty value", NULL);
	bad_file("hz =   # nothing\n", 1, "hz", "empty value", NULL);
	bad_file("page = \"/run/x\n", 1, "page", "unterminated quoted value",
		 NULL);
	bad_file("hz = 100000\njiffies_wrap_after = 50000\n", 2, "jiffies_wrap_after", "at most 42949 s",
		 NULL);
}

/* The errors the format above cannot hold yet still say where and why. */
static void test_error_lines_today(void)
{
	struct clockd_config cfg;
	char want[400], *errs = NULL;

	config_defaults(&cfg);
	snprintf(want, sizeof(want), "%s:1: ", path);
	check(load(&cfg, "hz 100\n", &errs) == -1 && count_lines(errs) == 1 &&
	      strncmp(errs, want, strlen(want)) == 0 && strstr(errs, "expected 'key = value'"),
	      NULL, "a line without '=': one FILE:LINE: line, expected 'key = value'");
	free(errs);
	check(load(&cfg, "hz =\n", &errs) == -1 && count_lines(errs) == 1 &&
	      strncmp(errs, want, strlen(want)) == 0 && strstr(errs, "empty value"),
	      NULL, "empty value: one FILE:LINE: line");
	free(errs);
	check(load(&cfg, "page = \"/x\n", &errs) == -1 && count_lines(errs) == 1 &&
	      strncmp(errs, want, strlen(want)) == 0 && strstr(errs, "unterminated"),
	      NULL, "unterminated quote: one FILE:LINE: line");
	free(errs);
	snprintf(want, sizeof(want), "%s:2: jiffies_wrap_after: ", path);
	check(load(&cfg, "hz = 100000\njiffies_wrap_after = 50000\n", &errs) == -1 &&
	      count_lines(errs) == 1 && strncmp(errs, want, strlen(want)) == 0 && strstr(errs, "42949"),
	      NULL, "hz * jiffies_wrap_after >= 2^32: one FILE:LINE: jiffies_wrap_after: line with the limit");
	free(errs);
	snprintf(want, sizeof(want), "%s:2: ", path);
	{
		char longline[1200];

		memset(longline, 'x', sizeof(longline));
		memcpy(longline, "hz = 1\n", 7);
		memcpy(longline + sizeof(longline) - 2, "\n", 2);
		check(load(&cfg, longline, &errs) == -1 && count_lines(errs) == 1 &&
		      strncmp(errs, want, strlen(want)) == 0 && strstr(errs, "longer than"),
		      NULL, "an over-long line: one FILE:LINE: line");
		free(errs);
	}
	check(config_load(&cfg, "/nonexistent/clockd.conf", NULL) == -1, NULL, "a missing file fails");
}

static void test_many_errors(void)
{
	static const char text[] =
		"hz = 100\n"          /* 1 good */
		"bogus = 1\n"         /* 2 */
		"\n"
		"source = sundial\n"  /* 4 */
		"stale_after_ms = x\n" /* 5 */
		"# fine\n"
		"hz = 200\n"          /* 7 duplicate */
		"page = /run/p\n";    /* 8 good */
	static const unsigned lines[] = { 2, 4, 5, 7 };
	struct clockd_config cfg;
	char *errs = NULL, *l;
	bool ok = true;

	config_defaults(&cfg);
	ok = load(&cfg, text, &errs) == -1 && count_lines(errs) == 4;
	l = errs;
	for (size_t i = 0; ok && i < 4; i++) {
		char want[400];

		snprintf(want, sizeof(want), "%s:%u: ", path, lines[i]);
		ok = strncmp(l, want, strlen(want)) == 0;
		l = strchr(l, '\n') + 1;
	}
	if (!ok)
		show(errs);
	check(ok, NULL, "four errors in one file: four lines, in order, at lines 2, 4, 5, 7");
	free(errs);
}

/* A NUL byte (issue #16): refused as such on its own line, and every
 * later line keeps its number. */
static void test_nul(void)
{
	static const char text[] = "hz = 100\nhz\0 = 5\nbogus = 1\n";
	struct clockd_config cfg;
	char want1[400], want2[400], *errs = NULL;
	size_t len;
	FILE *mem = open_memstream(&errs, &len), *f = fopen(path, "w");
	bool ok;

	if (!mem || !f || fwrite(text, 1, sizeof(text) - 1, f) != sizeof(text) - 1 || fclose(f) != 0)
		tap_bail("%s: %s", path, strerror(errno));
	config_defaults(&cfg);
	ok = config_load(&cfg, path, mem) == -1;
	fclose(mem);
	snprintf(want1, sizeof(want1), "%s:2: contains a NUL byte\n", path);
	snprintf(want2, sizeof(want2), "%s:3: bogus: unknown key\n", path);
	ok = ok && count_lines(errs) == 2 && strncmp(errs, want1, strlen(want1)) == 0 &&
	     strcmp(errs + strlen(want1), want2) == 0;
	if (!ok)
		show(errs);
	check(ok, NULL, "a NUL byte: 'contains a NUL byte' at line 2, the next error still at line 3");
	free(errs);
}

static void test_all_or_nothing(void)
{
	struct clockd_config cfg, before;
	char why[256], *errs = NULL;

	config_defaults(&cfg);
	if (config_set(&cfg, "hz", "250", why, sizeof(why)) < 0 ||
	    config_set(&cfg, "page", "/tmp/before", why, sizeof(why)) < 0)
		tap_bail("config_set: %s", why);
	before = cfg;
	check(load(&cfg, "hz = 100\nsource = tsc\npage = /run/after\nlog_level = shout\n", &errs) == -1 &&
	      memcmp(&cfg, &before, sizeof(cfg)) == 0,
	      NULL, "a failed load leaves every key as it was (good lines before the bad one too)");
	free(errs);
}

static void test_syntax(void)
{
	static const char text[] =
		"# clockd.conf\n"
		"\n"
		"   \t\n"
		"  hz=24   # trailing comment\n"
		"source\t=\tposix\n"
		"page = \"/run/with space/and#hash\"  # comment after quotes\n"
		"posix_clock = \"monotonic\"\n"
		"log_level = debug#no space\n"
		"jiffies_wrap_after = 0\n"
		"stale_after_ms = 3600000\n"
		"   # indented comment\n"
		"tsc_calibrate_ms = 10";   /* no final newline */
	struct clockd_config cfg;
	char *errs = NULL;
	int r;

	config_defaults(&cfg);
	r = load(&cfg, text, &errs);
	if (r != 0)
		show(errs);
	check(r == 0 && errs[0] == '\0' && cfg.hz == 24 && strcmp(cfg.source, "posix") == 0 &&
	      strcmp(cfg.page, "/run/with space/and#hash") == 0 && strcmp(cfg.posix_clock, "monotonic") == 0 &&
	      strcmp(cfg.log_level, "debug") == 0 && cfg.jiffies_wrap_after == 0 &&
	      cfg.stale_after_ms == 3600000 && cfg.tsc_calibrate_ms == 10 && strcmp(cfg.tick, "timerfd") == 0,
	      NULL, "comments, blank lines, tabs, quoted values, trailing comments, no final newline");
	free(errs);
}

/* The text config_write gives for @cfg. */
static char *written(const struct clockd_config *cfg)
{
	char *out = NULL;
	size_t len;
	FILE *mem = open_memstream(&out, &len);

	if (!mem)
		tap_bail("open_memstream");
	config_write(mem, cfg);
	fclose(mem);
	return out;
}

static void round_trip(const char *page, const char *todo)
{
	struct clockd_config cfg, back;
	char why[256], what[300], *text, *again, *errs = NULL;
	static const char *const sets[][2] = {
		{ "hz", "1024" }, { "jiffies_wrap_after", "4000" }, { "source", "posix" },
		{ "posix_clock", "boottime" }, { "stale_after_ms", "250" }, { "tsc_calibrate_ms", "500" },
		{ "log_level", "warning" },
	};
	bool ok;

	config_defaults(&cfg);
	for (size_t i = 0; i < sizeof(sets) / sizeof(sets[0]); i++)
		if (config_set(&cfg, sets[i][0], sets[i][1], why, sizeof(why)) < 0)
			tap_bail("config_set: %s", why);
	if (config_set(&cfg, "page", page, why, sizeof(why)) < 0)
		tap_bail("config_set: %s", why);
	text = written(&cfg);
	config_defaults(&back);
	ok = load(&back, text, &errs) == 0;
	again = written(&back);
	ok = ok && strcmp(text, again) == 0 && back.hz == cfg.hz && strcmp(back.page, cfg.page) == 0;
	if (!ok) {
		show(errs);
		tap_diag("page written %s, read back %s", cfg.page, back.page);
	}
	snprintf(what, sizeof(what), "config_write output re-loads to the same config (page %s)", page);
	check(ok, todo, what);
	free(text);
	free(again);
	free(errs);
}

static void test_defaults(void)
{
	struct clockd_config cfg;
	char *text, *l;
	bool ok = true;

	config_defaults(&cfg);
	text = written(&cfg);
	l = text;
	for (size_t i = 0; i < config_table_len; i++) {
		char want[400];

		/* paths and text are written quoted, so that any value reads back */
		bool quoted = config_table[i].type == CFG_PATH || config_table[i].type == CFG_STRING;

		snprintf(want, sizeof(want), quoted ? "%s = \"%s\"\n" : "%s = %s\n",
			 config_table[i].name, config_table[i].def);
		if (strncmp(l, want, strlen(want)) != 0) {
			tap_diag("key %s: want %s", config_table[i].name, want);
			ok = false;
			break;
		}
		l += strlen(want);
	}
	check(ok && *l == '\0', NULL, "config_defaults gives every key the table's default, in table order");
	check(cfg.hz == 1000 && cfg.jiffies_wrap_after == 300 && strcmp(cfg.page, "/run/clockd/page") == 0,
	      NULL, "defaults: hz 1000, jiffies_wrap_after 300, page /run/clockd/page");
	free(text);
}

int main(void)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(dir, sizeof(dir), "%s/clockd-config.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir))
		tap_bail("mkdtemp: %s", strerror(errno));
	snprintf(path, sizeof(path), "%s/clockd.conf", dir);
	tap_plan(27 + 6 + 1 + 1 + 1 + 1 + 3 + 2);
	test_errors();
	test_error_lines_today();
	test_many_errors();
	test_nul();
	test_all_or_nothing();
	test_syntax();
	round_trip("/run/clockd/page", NULL);
	round_trip("/tmp/a b", NULL);
	round_trip("/tmp/a#b", NULL);
	test_defaults();
	unlink(path);
	rmdir(dir);
	/* TODO results do not count: tap_done() would. */
	return failures ? 1 : 0;
}
