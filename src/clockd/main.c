/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * clockd: the daemon. Set-up is fatal on error; at run time errors are
 * logged and the daemon carries on.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <systemd/sd-daemon.h>

#include "clockd/clocksource.h"
#include "clockd/pagefile.h"
#include "clockd/tick.h"
#include "clockd/timekeeper.h"
#include "shared/config.h"
#include "shared/log.h"

struct clockd {
	struct clockd_config cfg;
	const char *config_path; /* NULL: embedded defaults */
	struct event_base *base;
	struct event *ev_tick, *ev_term, *ev_int, *ev_hup;
	struct clocksource cs;
	struct tick_device td;
	struct pagefile pf;
	struct timekeeper tk;
	uint64_t tick_errors;
};

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: clockd [OPTION]...\n"
		"Keep a clock from a hardware timer device and publish it to clients.\n"
		"\n"
		"  -c, --config FILE     read FILE (default " CONFIG_DEFAULT_PATH " if it exists,\n"
		"                        else the embedded defaults)\n"
		"  -o, --set KEY=VALUE   override one config key (repeatable)\n"
		"      --check-config    validate the configuration, print it, and exit\n"
		"      --help-config     list every config key with its default and range\n"
		"  -d, --debug           log at debug level\n"
		"  -h, --help            show this help and exit\n"
		"  -V, --version         show the version and exit\n"
		"\n"
		"See clockd(8) and clockd.conf(5).\n");
}

static void help_config(void)
{
	for (size_t i = 0; i < config_table_len; i++) {
		const struct config_key *k = &config_table[i];

		printf("%-20s default %-18s ", k->name, k->def);
		if (k->type == CFG_UINT)
			printf("range %llu..%llu", (unsigned long long)k->min, (unsigned long long)k->max);
		else if (k->type == CFG_CHOICE) {
			printf("one of");
			for (const char *const *c = k->choices; *c; c++)
				printf(" %s", *c);
		} else
			printf("absolute path");
		printf("\n    %s\n", k->doc);
	}
}

static void on_tick(evutil_socket_t fd, short what, void *arg)
{
	struct clockd *cd = arg;
	int64_t n = cd->td.ops->ack(&cd->td);

	if (n < 0) {
		if (cd->tick_errors++ == 0)
			log_warnx("tick %s: device error; the page goes stale until it recovers",
				  cd->td.ops->name);
		return;
	}
	if (cd->tick_errors) {
		log_notice("tick %s: recovered after %llu errors", cd->td.ops->name,
			   (unsigned long long)cd->tick_errors);
		cd->tick_errors = 0;
	}
	tk_update(&cd->tk);
	if (cd->td.ops->oneshot && cd->td.ops->arm(&cd->td, tk_next_tick_deadline(&cd->tk)) < 0)
		cd->tick_errors++;
}

static void on_stop(evutil_socket_t sig, short what, void *arg)
{
	struct clockd *cd = arg;

	log_info("signal %d: stopping", (int)sig);
	sd_notify(0, "STOPPING=1");
	event_base_loopbreak(cd->base);
}

/* SIGHUP: re-read the file; all or nothing. Only log_level applies at
 * once; other changes are reported as needing a restart. */
static void on_reload(evutil_socket_t sig, short what, void *arg)
{
	struct clockd *cd = arg;
	struct clockd_config next;

	sd_notify(0, "RELOADING=1");
	config_defaults(&next);
	if (cd->config_path && config_load(&next, cd->config_path, stderr) < 0) {
		log_warnx("reload: %s rejected; the running configuration is unchanged", cd->config_path);
		goto out;
	}
	for (size_t i = 0; i < config_table_len; i++) {
		const struct config_key *k = &config_table[i];

		if (memcmp((const char *)&next + k->offset, (const char *)&cd->cfg + k->offset, k->size) == 0)
			continue;
		if (strcmp(k->name, "log_level") == 0) {
			log_set_level(log_level_from_name(next.log_level));
			memcpy(cd->cfg.log_level, next.log_level, sizeof(next.log_level));
			log_notice("reload: log_level is now %s", next.log_level);
		} else {
			log_notice("reload: %s changed; it takes effect at the next restart", k->name);
		}
	}
out:
	sd_notify(0, "READY=1");
}

static void parse_args(struct clockd *cd, int argc, char **argv, bool *check_only)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "set", required_argument, NULL, 'o' },
		{ "check-config", no_argument, NULL, 'C' },
		{ "help-config", no_argument, NULL, 'K' },
		{ "debug", no_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	char *sets[64];
	int nsets = 0, c;
	bool debug = false;

	while ((c = getopt_long(argc, argv, "c:o:dhV", opts, NULL)) != -1) {
		switch (c) {
		case 'c': cd->config_path = optarg; break;
		case 'o':
			if (nsets == (int)(sizeof(sets) / sizeof(sets[0])))
				fatalx("--set: too many overrides");
			sets[nsets++] = optarg;
			break;
		case 'C': *check_only = true; break;
		case 'K': help_config(); exit(EXIT_SUCCESS);
		case 'd': debug = true; break;
		case 'h': usage(stdout); exit(EXIT_SUCCESS);
		case 'V': printf("clockd %s\n", PACKAGE_VERSION); exit(EXIT_SUCCESS);
		default: usage(stderr); exit(2);
		}
	}
	if (optind < argc) {
		fprintf(stderr, "clockd: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		exit(2);
	}
	config_defaults(&cd->cfg);
	if (!cd->config_path && access(CONFIG_DEFAULT_PATH, F_OK) == 0)
		cd->config_path = CONFIG_DEFAULT_PATH;
	if (cd->config_path && config_load(&cd->cfg, cd->config_path, stderr) < 0)
		fatalx("%s: configuration rejected", cd->config_path);
	for (int i = 0; i < nsets; i++) {
		char why[256], *eq = strchr(sets[i], '=');

		if (!eq)
			fatalx("--set %s: expected KEY=VALUE", sets[i]);
		*eq = '\0';
		if (config_set(&cd->cfg, sets[i], eq + 1, why, sizeof(why)) < 0)
			fatalx("--set: %s", why);
		*eq = '=';
	}
	{
		char why[256];

		if (config_check(&cd->cfg, why, sizeof(why)) < 0)
			fatalx("configuration: %s", why);
	}
	log_set_level(debug ? LOG_DEBUG : log_level_from_name(cd->cfg.log_level));
}

static void setup_events(struct clockd *cd)
{
	struct event_config *ec = event_config_new();

	/* libevent's default monotonic clock is the coarse one. */
	if (!ec || event_config_set_flag(ec, EVENT_BASE_FLAG_PRECISE_TIMER) < 0)
		fatalx("libevent: cannot configure the event base");
	cd->base = event_base_new_with_config(ec);
	event_config_free(ec);
	if (!cd->base)
		fatalx("libevent: cannot create the event base");
	cd->ev_tick = event_new(cd->base, cd->td.fd, EV_READ | EV_PERSIST, on_tick, cd);
	cd->ev_term = evsignal_new(cd->base, SIGTERM, on_stop, cd);
	cd->ev_int = evsignal_new(cd->base, SIGINT, on_stop, cd);
	cd->ev_hup = evsignal_new(cd->base, SIGHUP, on_reload, cd);
	if (!cd->ev_tick || !cd->ev_term || !cd->ev_int || !cd->ev_hup ||
	    event_add(cd->ev_tick, NULL) < 0 || event_add(cd->ev_term, NULL) < 0 ||
	    event_add(cd->ev_int, NULL) < 0 || event_add(cd->ev_hup, NULL) < 0)
		fatalx("libevent: cannot add events");
}

static void teardown(struct clockd *cd)
{
	event_free(cd->ev_tick);
	event_free(cd->ev_term);
	event_free(cd->ev_int);
	event_free(cd->ev_hup);
	event_base_free(cd->base);
	pagefile_release(&cd->pf);
	pagefile_close(&cd->pf);
	tick_close(&cd->td);
	clocksource_close(&cd->cs);
}

int main(int argc, char **argv)
{
	struct clockd cd = { 0 };
	bool check_only = false;

	log_init("clockd", LOG_INFO);
	parse_args(&cd, argc, argv, &check_only);
	if (check_only) {
		config_write(stdout, &cd.cfg);
		fprintf(stderr, "clockd: configuration %s is valid\n",
			cd.config_path ? cd.config_path : "(embedded defaults)");
		return EXIT_SUCCESS;
	}
	if (clocksource_open(&cd.cs, &cd.cfg) < 0)
		fatalx("no clocksource");
	if (tick_open(&cd.td, &cd.cfg) < 0)
		fatalx("no tick device");
	if (pagefile_open(&cd.pf, cd.cfg.page) < 0)
		fatalx("%s: cannot use the time page", cd.cfg.page);
	if (tk_init(&cd.tk, &cd.pf, &cd.cs, &cd.cfg, cd.td.ops->name) < 0)
		fatalx("timekeeper set-up failed");
	if (pagefile_take(&cd.pf) < 0)
		fatalx("%s: cannot own the page", cd.cfg.page);
	setup_events(&cd);
	if (cd.td.ops->oneshot && cd.td.ops->arm(&cd.td, tk_next_tick_deadline(&cd.tk)) < 0)
		fatalx("tick %s: cannot arm the first tick", cd.td.ops->name);
	log_info("running: source %s, tick %s, HZ %u, page %s, jiffies %llu",
		 cd.cs.ops->name, cd.td.ops->name, cd.cfg.hz, cd.cfg.page,
		 (unsigned long long)cd.tk.jiffies);
	sd_notifyf(0, "READY=1\nSTATUS=source %s, tick %s, HZ %u", cd.cs.ops->name,
		   cd.td.ops->name, cd.cfg.hz);
	event_base_dispatch(cd.base);
	teardown(&cd);
	return EXIT_SUCCESS;
}
