/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer harness of the configuration parser (src/shared/config.c).
 *
 * The first byte chooses the entry point (the seeds use "L" and "S"):
 *  - even: the rest is a clockd.conf, written to a file and given to
 *    config_load(). A refusal must leave the configuration untouched (all
 *    or nothing) and write at least one error line; an accepted file must
 *    pass config_check(), and config_write() of the result must load again
 *    to exactly the same configuration.
 *  - odd: the rest is "KEY\nVALUE" for config_set(). A refusal must give a
 *    reason; an accepted value must survive a config_write()/config_load()
 *    round trip too (when the result passes config_check()).
 * Any breach aborts. Built and run by tests/fuzz/run.sh.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shared/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static char conf_path[64];
static char again_path[64];
static FILE *errs; /* a scratch file: tells whether a refusal said why */

static void fail(const char *what)
{
	fprintf(stderr, "config-fuzz: %s\n", what);
	abort();
}

static void remove_files(void)
{
	unlink(conf_path);
	unlink(again_path);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	/* Memory, not a disk: files are written for every input. */
	const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";

	snprintf(conf_path, sizeof(conf_path), "%s/config-fuzz.%d.conf", dir, (int)getpid());
	snprintf(again_path, sizeof(again_path), "%s/config-fuzz.%d.again", dir, (int)getpid());
	errs = tmpfile();
	if (!errs)
		fail("tmpfile");
	atexit(remove_files);
	return 0;
}

static void write_file(const char *path, const void *buf, size_t n)
{
	FILE *f = fopen(path, "w");

	if (!f || fwrite(buf, 1, n, f) != n || fclose(f) != 0)
		fail("cannot write the scratch file");
}

/* config_write(@cfg) as text, in a malloc'd string (*@len bytes). */
static char *written(const struct clockd_config *cfg, size_t *len)
{
	char *text = NULL;
	FILE *f = open_memstream(&text, len);

	if (!f)
		fail("open_memstream");
	config_write(f, cfg);
	if (fclose(f) != 0)
		fail("config_write");
	return text;
}

/* config_write(@cfg), loaded again over the defaults, writes the same text:
 * every value it accepted has one way back. */
static void round_trip(const struct clockd_config *cfg)
{
	struct clockd_config again;
	size_t n1, n2;
	char *t1 = written(cfg, &n1), *t2;

	write_file(again_path, t1, n1);
	config_defaults(&again);
	if (config_load(&again, again_path, NULL) != 0)
		fail("config_write() output does not load");
	t2 = written(&again, &n2);
	if (n1 != n2 || memcmp(t1, t2, n1) != 0)
		fail("config_write() output loads to another configuration");
	free(t1);
	free(t2);
}

static void fuzz_load(const uint8_t *data, size_t size)
{
	struct clockd_config cfg, before;
	char why[256];

	write_file(conf_path, data, size);
	config_defaults(&cfg);
	before = cfg;
	rewind(errs);
	if (ftruncate(fileno(errs), 0) != 0)
		fail("ftruncate");
	if (config_load(&cfg, conf_path, errs) != 0) {
		if (memcmp(&cfg, &before, sizeof(cfg)) != 0)
			fail("a refused file changed the configuration");
		if (ftell(errs) <= 0)
			fail("a refused file without an error line");
		return;
	}
	if (config_check(&cfg, why, sizeof(why)) != 0)
		fail("config_load() accepted what config_check() refuses");
	round_trip(&cfg);
}

static void fuzz_set(const uint8_t *data, size_t size)
{
	struct clockd_config cfg;
	char *buf = malloc(size + 1), *value;
	char why[256];

	if (!buf)
		return;
	memcpy(buf, data, size);
	buf[size] = '\0';
	value = strchr(buf, '\n');
	if (value)
		*value++ = '\0';
	else
		value = buf + size;
	config_defaults(&cfg);
	why[0] = '\0';
	if (config_set(&cfg, buf, value, why, sizeof(why)) != 0) {
		if (!why[0])
			fail("config_set() refused without a reason");
	} else if (config_check(&cfg, why, sizeof(why)) == 0) {
		round_trip(&cfg);
	}
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	if (data[0] & 1)
		fuzz_set(data + 1, size - 1);
	else
		fuzz_load(data + 1, size - 1);
	return 0;
}
