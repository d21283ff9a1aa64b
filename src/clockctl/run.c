/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * clockctl run [--page PATH] -- PROGRAM [ARG]...: exec PROGRAM with
 * libclockd-preload.so added to LD_PRELOAD, so that it reads clockd's
 * clocks where it asks for the kernel's (libclockd-preload(8)).
 *
 * The library is, in order: $CLOCKD_PRELOAD_LIB; the one that goes with
 * the libclockd this clockctl runs with, in clockd/ beside it (installed:
 * $(libdir)/clockd/) or beside it (a build tree's .libs/), so a build
 * tree's clockctl finds the library built with it and an installed one the
 * installed library; $(pkglibdir)/libclockd-preload.so.
 */
#include <dlfcn.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clockctl/clockctl.h"

#define PRELOAD_NAME "libclockd-preload.so"

/* PRELOAD_NAME in clockd/ under the directory of the libclockd this
 * process runs with, else in that directory, into @buf; false if that is
 * not known or has no such file. */
static bool beside_libclockd(char *buf, size_t len)
{
	static const char *const subdirs[] = { "/clockd/", "/" };
	Dl_info info;
	const char *slash;
	size_t i;
	int n;

	if (!dladdr((void *)clockd_version, &info) || !info.dli_fname)
		return false;
	slash = strrchr(info.dli_fname, '/');
	if (!slash)
		return false;
	for (i = 0; i < sizeof(subdirs) / sizeof(subdirs[0]); i++) {
		n = snprintf(buf, len, "%.*s%s%s", (int)(slash - info.dli_fname), info.dli_fname, subdirs[i],
			     PRELOAD_NAME);
		if (n > 0 && (size_t)n < len && access(buf, R_OK) == 0)
			return true;
	}
	return false;
}

static const char *find_library(char *buf, size_t len)
{
	const char *env = getenv("CLOCKD_PRELOAD_LIB");

	if (env && *env)
		return env;
	if (beside_libclockd(buf, len))
		return buf;
	snprintf(buf, len, "%s/%s", PKGLIBDIR, PRELOAD_NAME);
	return buf;
}

/* LD_PRELOAD with @lib appended (after whatever is there: a sanitizer's
 * runtime must stay first). */
static int add_preload(const char *lib)
{
	const char *old = getenv("LD_PRELOAD");
	char *val;
	int r;

	if (!old || !*old)
		return setenv("LD_PRELOAD", lib, 1);
	if (asprintf(&val, "%s:%s", old, lib) < 0)
		return -1;
	r = setenv("LD_PRELOAD", val, 1);
	free(val);
	return r;
}

enum { OPT_PAGE = CTL_OPT_LONG };

int verb_run(const struct ctl *ctl, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "page", required_argument, NULL, OPT_PAGE },
		{ NULL, 0, NULL, 0 },
	};
	char buf[PATH_MAX];
	const char *lib;
	int c;

	(void)ctl;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:", opts, NULL)) != -1) {
		switch (c) {
		case OPT_PAGE:
			if (!*optarg || strlen(optarg) >= sizeof(((struct clockd_status *)0)->page_path))
				return ctl_usage_error("run: --page: '%.64s': empty or too long", optarg);
			if (setenv("CLOCKD_SHM", optarg, 1) < 0)
				goto env_error;
			break;
		default: return ctl_option_error(argv, "run: ", c);
		}
	}
	if (optind >= argc)
		return ctl_usage_error("run: no program to run");
	lib = find_library(buf, sizeof(buf));
	if (access(lib, R_OK) != 0) {
		ctl_error("run: %s: %s (set CLOCKD_PRELOAD_LIB to the library)", lib, strerror(errno));
		return CTL_EXIT_USAGE;
	}
	if (add_preload(lib) < 0)
		goto env_error;
	execvp(argv[optind], argv + optind);
	c = errno;
	ctl_error("run: %s: %s", argv[optind], strerror(c));
	return c == ENOENT ? CTL_EXIT_NOT_FOUND : CTL_EXIT_CANNOT_EXEC;

env_error:
	ctl_error("run: setenv: %s", strerror(errno));
	return CTL_EXIT_USAGE;
}
