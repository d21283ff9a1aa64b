/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * clockctl: query the clockd daemon through libclockd.
 *
 *     clockctl [--json | --csv] [-v] [--page PATH] [VERB [ARG]...]
 *
 * The verbs live in one table; --help is generated from it. The global
 * options are taken out of the line wherever they stand (before or after
 * the verb, up to "--" or run's PROGRAM), then the verb parses the rest.
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
	  "      -n, --count COUNT       stop after COUNT lines (0: until SIGINT/SIGTERM; default)\n"
	  "      exits 1 at once if the daemon is not live at the first line\n" },
	{ "timers", 0, ARGS_ANY, verb_timers, "[--socket PATH]",
	  "show the timer bases per CPU and the timer clients (control socket)",
	  "      --socket PATH  the daemon's control socket (default $CLOCKD_SOCKET, else the\n"
	  "                     file \"control\" beside the time page: " CLOCKD_DEFAULT_SOCKET "\n"
	  "                     for the default page); without it the page must be live\n" },
	{ "wait", 0, ARGS_ANY, verb_wait, "[--synced] [--timeout SECONDS]",
	  "wait until the daemon is live (and, with --synced, synchronised)",
	  "      --synced           also wait for the page's synced flag (a locked reference)\n"
	  "      --timeout SECONDS  give up after SECONDS, fractions allowed, exit 1\n"
	  "                         (default 0: wait for ever)\n" },
	{ "metrics", 0, ARGS_ANY, verb_metrics, "[--openmetrics]",
	  "print the state, tracking, devices and timers as Prometheus metrics",
	  "      --openmetrics  OpenMetrics 1.0 text (default: Prometheus text 0.0.4, as\n"
	  "                     node_exporter's textfile collector reads)\n"
	  "      a daemon not live: clockd_up 0 and its state, exit 0\n" },
	{ "reload", 0, 0, verb_reload, "", "make the daemon re-read its configuration (SIGHUP)", NULL },
	{ "run", 1, ARGS_ANY, verb_run, "[--page PATH] [--] PROGRAM [ARG]...",
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
	      "Options (anywhere on the line; for run, before PROGRAM or --):\n"
	      "  -c, --csv        print CSV: a header line of field names, then a line per\n"
	      "                   record (the names and values of --json)\n"
	      "      --json       print JSON (one object; one per line for watch); times are\n"
	      "                   NAME_sec and NAME_nsec integers, exact in any JSON reader\n"
	      "      --page PATH  read the time page at PATH (sets $CLOCKD_SHM)\n"
	      "  -v, --verbose    text: a legend of the columns and fields first\n"
	      "  -h, --help       show this help and exit (after a verb: the verb's help)\n"
	      "  -V, --version    show the versions of clockctl and libclockd and exit\n"
	      "\n"
	      "Verbs:\n",
	      out);
	for (size_t i = 0; i < N_VERBS; i++) {
		char synopsis[64];

		snprintf(synopsis, sizeof(synopsis), "%s %s", verbs[i].name, verbs[i].args);
		/* A long synopsis gets its line, the text the next one. */
		if (strlen(synopsis) > 30)
			fprintf(out, "  %s\n  %-30s %s\n", synopsis, "", verbs[i].help);
		else
			fprintf(out, "  %-30s %s\n", synopsis, verbs[i].help);
		if (verbs[i].details)
			fprintf(out, "%s", verbs[i].details);
	}
	fputs("\n"
	      "Exit status:\n"
	      "  0  success\n"
	      "  1  the daemon cannot answer: no page, stale (no update within its limit), or\n"
	      "     gone; status prints its report first; wait: not ready in time\n"
	      "  2  usage error: unknown verb or option, bad argument\n"
	      "  3  reload: the daemon rejected the configuration (its reasons on stderr)\n"
	      "  126, 127  run: PROGRAM could not be run, or was not found (else its status)\n"
	      "\n"
	      "See clockctl(1).\n",
	      out);
}

/* VERB --help: the verb's own lines of the help. */
static void verb_usage(const struct verb *v)
{
	printf("Usage: clockctl [OPTION]... %s %s\n%s.\n", v->name, v->args, v->help);
	if (v->details)
		printf("\nOptions of %s:\n%s", v->name, v->details);
	printf("\nGlobal options and exit status: clockctl --help; see clockctl(1).\n");
}

static void verbs_json(const struct ctl *ctl)
{
	struct json_object *arr = json_object_new_array();

	for (size_t i = 0; i < N_VERBS; i++) {
		struct json_object *v = json_object_new_object();

		json_object_object_add(v, "name", json_object_new_string(verbs[i].name));
		json_object_object_add(v, "args", json_object_new_string(verbs[i].args));
		json_object_object_add(v, "help", json_object_new_string(verbs[i].help));
		json_object_array_add(arr, v);
	}
	ctl_print(ctl, arr, true);
}

static int verb_help(const struct ctl *ctl, int argc, char **argv)
{
	if (ctl->format != CTL_TEXT)
		verbs_json(ctl);
	else
		usage(stdout);
	return CTL_EXIT_OK;
}

static void version(const struct ctl *ctl)
{
	struct json_object *o;

	if (ctl->format == CTL_TEXT) {
		printf("clockctl %s (libclockd %s)\n", PACKAGE_VERSION, clockd_version());
		return;
	}
	o = json_object_new_object();
	json_object_object_add(o, "clockctl", json_object_new_string(PACKAGE_VERSION));
	json_object_object_add(o, "libclockd", json_object_new_string(clockd_version()));
	ctl_print(ctl, o, true);
}

/* What the line asks besides the verb. */
struct line {
	bool help, version; /* before the verb */
	bool verb_help;     /* -h/--help after the verb */
	bool json, csv;
};

/* The verbs' options that take their argument as the next word: that word
 * is the verb's, never a global option or a verb name. */
static bool takes_next(const char *arg)
{
	static const char *const opts[] = { "-i", "--interval", "-n", "--count", "--socket", "--timeout" };

	for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++)
		if (strcmp(arg, opts[i]) == 0)
			return true;
	return false;
}

static int set_page(const char *path)
{
	struct clockd_status st;

	/* libclockd silently uses its default page for an empty or
	 * over-long $CLOCKD_SHM: refuse both here. */
	if (!*path || strlen(path) >= sizeof(st.page_path))
		return ctl_usage_error("--page: '%.64s': empty or longer than %zu bytes", path,
				       sizeof(st.page_path) - 1);
	/* Before any libclockd call: it reads the path once. */
	if (setenv("CLOCKD_SHM", path, 1) < 0) {
		ctl_error("setenv CLOCKD_SHM: %s", strerror(errno));
		return CTL_EXIT_USAGE;
	}
	return 0;
}

/* A group of short options ("-cv"): true if every letter is a global
 * one (c, v; and h, V before the verb), which are then applied. */
static bool short_group(struct ctl *ctl, struct line *ln, const char *arg, bool after_verb)
{
	if (arg[0] != '-' || arg[1] == '-' || !arg[1] ||
	    strspn(arg + 1, after_verb ? "cvh" : "cvhV") != strlen(arg + 1))
		return false;
	for (const char *p = arg + 1; *p; p++) {
		switch (*p) {
		case 'c': ln->csv = true; break;
		case 'v': ctl->verbose = true; break;
		case 'h': *(after_verb ? &ln->verb_help : &ln->help) = true; break;
		case 'V': ln->version = true; break;
		}
	}
	return true;
}

/* One word of the line: 1 if it was a global option (and @argv[*i + 1]
 * too if it took it), 0 if not, or an exit status + 2 on an error. */
static int global_option(struct ctl *ctl, struct line *ln, int argc, char **argv, int *i, bool after_verb)
{
	const char *a = argv[*i];
	int rc;

	if (strcmp(a, "--json") == 0)
		ln->json = true;
	else if (strcmp(a, "--csv") == 0)
		ln->csv = true;
	else if (strcmp(a, "--verbose") == 0)
		ctl->verbose = true;
	else if (strcmp(a, "--help") == 0)
		*(after_verb ? &ln->verb_help : &ln->help) = true;
	else if (strcmp(a, "--version") == 0 && !after_verb)
		ln->version = true;
	else if (strncmp(a, "--page=", 7) == 0 || strcmp(a, "--page") == 0) {
		if (a[6] != '=' && *i + 1 >= argc)
			return ctl_usage_error("--page: needs an argument") + 2;
		rc = set_page(a[6] == '=' ? a + 7 : argv[++*i]);
		if (rc)
			return rc + 2;
	} else if (!short_group(ctl, ln, a, after_verb))
		return 0;
	return 1;
}

/*
 * Take the global options out of @argv, wherever they stand: before the
 * verb, or after it up to "--" (kept for the verb) or, for run, up to
 * PROGRAM. The words left (the verb and its own arguments) move to the
 * front of @argv from index 1; *@argc is updated. Returns -1 to go on, or
 * an exit status.
 */
static int parse_options(struct ctl *ctl, struct line *ln, int *argc, char **argv)
{
	const char *verb = NULL;
	int out = 1, rc;

	for (int i = 1; i < *argc; i++) {
		const char *a = argv[i];

		if (strcmp(a, "--") == 0) {
			/* The rest is the verb's ("--" kept for it), or, before
			 * the verb, the verb and its arguments. */
			if (!verb)
				i++;
			while (i < *argc)
				argv[out++] = argv[i++];
			break;
		}
		rc = global_option(ctl, ln, *argc, argv, &i, verb != NULL);
		if (rc > 1)
			return rc - 2;
		if (rc == 1)
			continue;
		if (a[0] == '-' && a[1] && !verb)
			return ctl_usage_error("%s: unknown option", a);
		argv[out++] = argv[i];
		if (a[0] == '-' && a[1]) {
			if (takes_next(a) && i + 1 < *argc)
				argv[out++] = argv[++i];
		} else if (!verb) {
			verb = a;
		} else if (strcmp(verb, "run") == 0) { /* PROGRAM: the rest is its */
			while (++i < *argc)
				argv[out++] = argv[i];
			break;
		}
	}
	*argc = out;
	argv[out] = NULL;
	if (ln->json && ln->csv)
		return ctl_usage_error("--json and --csv: choose one");
	ctl->format = ln->json ? CTL_JSON : ln->csv ? CTL_CSV : CTL_TEXT;
	if (ln->help)
		return verb_help(ctl, 0, NULL);
	if (ln->version) {
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

static int dispatch(const struct ctl *ctl, const struct line *ln, int argc, char **argv)
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
	if (ln->verb_help) {
		verb_usage(v);
		return CTL_EXIT_OK;
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
	struct ctl ctl = { .format = CTL_TEXT };
	struct line ln = { .help = false };
	int rc;

	rc = parse_options(&ctl, &ln, &argc, argv);
	if (rc >= 0)
		return close_stdout(rc);
	/* Show the daemon itself, never the kernel's clocks standing in for
	 * it ($CLOCKD_FALLBACK=kernel). After parse_options: this first
	 * library call reads $CLOCKD_SHM, which --page sets. */
	clockd_set_fallback(0);
	rc = dispatch(&ctl, &ln, argc - 1, argv + 1);
	return close_stdout(rc);
}
