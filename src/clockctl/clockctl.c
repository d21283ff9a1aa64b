/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * clockctl: query the clockd daemon through libclockd.
 *
 *     clockctl [--json] [--page PATH] [VERB [ARG]...]
 *
 * The verbs live in one table; --help is generated from it.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clockctl/clockctl.h"

#define ARGS_ANY (-1) /* the verb checks its own arguments */

struct verb {
	const char *name;
	int min_args, max_args; /* words after the verb's name */
	verb_fn *fn;
	const char *args;    /* synopsis of the arguments, for --help */
	const char *help;    /* one line */
	const char *details; /* the verb's options, for --help, or NULL */
};

static verb_fn verb_help;

/* The first entry is the default verb. */
static const struct verb verbs[] = {
	{ "status", 0, 0, verb_status, "", "show the daemon's state and its page (default)", NULL },
	{ "time", 0, 0, verb_time, "", "read every clockd clock next to the kernel's", NULL },
	{ "sources", 0, 0, verb_sources, "", "list the clocksources and tick devices with their state", NULL },
	{ "tracking", 0, 0, verb_tracking, "", "show how the clock follows its reference (discipline)", NULL },
	{ "jiffies", 0, 0, verb_jiffies, "", "show jiffies_64, the 32-bit jiffies and the next wrap", NULL },
	{ "watch", 0, ARGS_ANY, verb_watch, "[-i SECONDS] [-n COUNT]",
	  "print jiffies, monotonic, realtime and the state every interval",
	  "      -i, --interval SECONDS  time between lines, fractions allowed (default 1)\n"
	  "      -n, --count COUNT       stop after COUNT lines (0: until SIGINT/SIGTERM; default)\n" },
	{ "timers", 0, ARGS_ANY, verb_timers, "[--socket PATH] [--json]",
	  "show the timer bases per CPU and the timer clients (control socket)",
	  "      --socket PATH  the daemon's control socket (default $CLOCKD_SOCKET, else\n"
	  "                     " CLOCKD_DEFAULT_SOCKET ")\n"
	  "      --json         as the global --json\n" },
	{ "reload", 0, 0, verb_reload, "", "make the daemon re-read its configuration (SIGHUP)", NULL },
	{ "run", 1, ARGS_ANY, verb_run, "[--page PATH] -- PROGRAM [ARG]...",
	  "run PROGRAM on clockd time (LD_PRELOAD=libclockd-preload.so)",
	  "      --page PATH  the time page to use (sets $CLOCKD_SHM, as the global --page)\n"
	  "      library: $CLOCKD_PRELOAD_LIB, else libclockd-preload.so beside libclockd,\n"
	  "               else in " PKGLIBDIR "\n" },
	{ "help", 0, 0, verb_help, "", "show this help", NULL },
};
#define N_VERBS (sizeof(verbs) / sizeof(verbs[0]))

static void usage(FILE *out)
{
	fputs("Usage: clockctl [OPTION]... [VERB [ARG]...]\n"
	      "Query the clockd daemon through libclockd.\n"
	      "\n"
	      "Options (before the verb):\n"
	      "      --json       print JSON (one object; one per line for watch)\n"
	      "      --page PATH  read the time page at PATH (sets $CLOCKD_SHM)\n"
	      "  -h, --help       show this help and exit\n"
	      "  -V, --version    show the versions of clockctl and libclockd and exit\n"
	      "\n"
	      "Verbs:\n",
	      out);
	for (size_t i = 0; i < N_VERBS; i++) {
		char synopsis[64];

		snprintf(synopsis, sizeof(synopsis), "%s %s", verbs[i].name, verbs[i].args);
		fprintf(out, "  %-30s %s\n", synopsis, verbs[i].help);
		if (verbs[i].details)
			fprintf(out, "%s", verbs[i].details);
	}
	fputs("\n"
	      "Exit status:\n"
	      "  0  success (status: the daemon is live)\n"
	      "  1  the daemon cannot answer: no page, stale, or gone\n"
	      "  2  usage error: unknown verb or option, bad argument\n"
	      "  3  status: the report was printed, the daemon is not live\n"
	      "  126, 127  run: PROGRAM could not be run, or was not found (else its status)\n"
	      "\n"
	      "See clockctl(1).\n",
	      out);
}

static void verbs_json(void)
{
	struct json_object *arr = json_object_new_array();

	for (size_t i = 0; i < N_VERBS; i++) {
		struct json_object *v = json_object_new_object();

		json_object_object_add(v, "name", json_object_new_string(verbs[i].name));
		json_object_object_add(v, "args", json_object_new_string(verbs[i].args));
		json_object_object_add(v, "help", json_object_new_string(verbs[i].help));
		json_object_array_add(arr, v);
	}
	ctl_json_print(arr);
}

static int verb_help(const struct ctl *ctl, int argc, char **argv)
{
	if (ctl->json)
		verbs_json();
	else
		usage(stdout);
	return CTL_EXIT_OK;
}

static void version(const struct ctl *ctl)
{
	struct json_object *o;

	if (!ctl->json) {
		printf("clockctl %s (libclockd %s)\n", PACKAGE_VERSION, clockd_version());
		return;
	}
	o = json_object_new_object();
	json_object_object_add(o, "clockctl", json_object_new_string(PACKAGE_VERSION));
	json_object_object_add(o, "libclockd", json_object_new_string(clockd_version()));
	ctl_json_print(o);
}

enum { OPT_JSON = CTL_OPT_LONG, OPT_PAGE, OPT_HELP, OPT_VERSION };

/* Parse the global options. Returns -1 to go on with the verb at
 * argv[optind], or an exit status. */
static int parse_options(struct ctl *ctl, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, OPT_JSON },
		{ "page", required_argument, NULL, OPT_PAGE },
		{ "help", no_argument, NULL, OPT_HELP },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ NULL, 0, NULL, 0 },
	};
	struct clockd_status st;
	bool show_help = false, show_version = false;
	int c;

	opterr = 0; /* our own one-line messages */
	/* "+": stop at the verb, whose options are its own. */
	while ((c = getopt_long(argc, argv, "+:hV", opts, NULL)) != -1) {
		switch (c) {
		case OPT_JSON: ctl->json = true; break;
		case OPT_PAGE:
			/* libclockd silently uses its default page for an
			 * empty or over-long $CLOCKD_SHM: refuse both here. */
			if (!*optarg || strlen(optarg) >= sizeof(st.page_path))
				return ctl_usage_error("--page: '%.64s': empty or longer than %zu bytes",
						       optarg, sizeof(st.page_path) - 1);
			/* Before any libclockd call: it reads the path once. */
			if (setenv("CLOCKD_SHM", optarg, 1) < 0) {
				ctl_error("setenv CLOCKD_SHM: %s", strerror(errno));
				return CTL_EXIT_USAGE;
			}
			break;
		case 'h':
		case OPT_HELP: show_help = true; break;
		case 'V':
		case OPT_VERSION: show_version = true; break;
		default: return ctl_option_error(argv, "", c);
		}
	}
	if (show_help)
		return verb_help(ctl, 0, NULL);
	if (show_version) {
		version(ctl);
		return CTL_EXIT_OK;
	}
	return -1;
}

static const struct verb *find_verb(const char *name)
{
	for (size_t i = 0; i < N_VERBS; i++)
		if (strcmp(verbs[i].name, name) == 0)
			return &verbs[i];
	return NULL;
}

static int dispatch(const struct ctl *ctl, int argc, char **argv)
{
	char name[16], *default_argv[] = { name, NULL };
	const struct verb *v;
	int nargs;

	if (argc == 0) {
		v = &verbs[0];
		snprintf(name, sizeof(name), "%s", v->name);
		argv = default_argv;
		argc = 1;
	} else {
		v = find_verb(argv[0]);
		if (!v)
			return ctl_usage_error("%s: unknown verb", argv[0]);
	}
	nargs = argc - 1;
	if (nargs < v->min_args)
		return ctl_usage_error("%s: missing argument", v->name);
	if (v->max_args != ARGS_ANY && nargs > v->max_args)
		return ctl_usage_error("%s: '%s': unexpected argument", v->name, argv[v->max_args + 1]);
	return v->fn(ctl, argc, argv);
}

/* A full disk or a closed pipe must not pass for success. */
static int close_stdout(int rc)
{
	errno = 0;
	if (fflush(stdout) != 0 || ferror(stdout)) {
		ctl_error("standard output: %s", strerror(errno ? errno : EIO));
		return rc ? rc : CTL_EXIT_DAEMON;
	}
	return rc;
}

int main(int argc, char **argv)
{
	struct ctl ctl = { .json = false };
	int rc;

	rc = parse_options(&ctl, argc, argv);
	if (rc >= 0)
		return close_stdout(rc);
	/* Show the daemon itself, never the kernel's clocks standing in for
	 * it ($CLOCKD_FALLBACK=kernel). After parse_options: this first
	 * library call reads $CLOCKD_SHM, which --page sets. */
	clockd_set_fallback(0);
	rc = dispatch(&ctl, argc - optind, argv + optind);
	return close_stdout(rc);
}
