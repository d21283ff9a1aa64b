/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * clockd: the daemon. Set-up is fatal on error; at run time errors are
 * logged and the daemon carries on.
 */
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <systemd/sd-daemon.h>

#include <clockd/clockd.h>

#include "clockd/ctlserver.h"
#include "clockd/devices.h"
#include "clockd/discipline.h"
#include "clockd/reference.h"
#include "clockd/export.h"
#include "clockd/pagefile.h"
#include "clockd/ticker.h"
#include "clockd/timekeeper.h"
#include "clockd/timerbase.h"
#include "shared/config.h"
#include "shared/log.h"
#include "shared/paths.h"
#include "shared/tickmath.h"

#define MAX_OVERRIDES 64
#define WATCH_MIN_NS 100000000ull /* the tick watchdog's shortest period */

struct clockd {
	struct clockd_config cfg;
	const char *config_path; /* NULL: embedded defaults */
	char *overrides[MAX_OVERRIDES]; /* -o KEY=VALUE, applied over the file */
	int noverrides;
	bool debug;
	struct event_base *base;
	struct event *ev_term, *ev_int, *ev_hup, *ev_watch;
	uint64_t watch_updates;   /* tk.updates at the last progress seen */
	int64_t watch_progress_ns; /* kernel CLOCK_MONOTONIC of that */
	struct devices dv;
	struct pagefile pf;
	struct timekeeper tk;
	struct ticker ticker;
	struct reference ref;
	struct discipline disc;
	struct exporter ex;
	struct timer_bases *tb;
	struct ctlserver *srv;
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

		printf("%-20s default %-18s ", k->name, k->def[0] ? k->def : "\"\"");
		if (k->type == CFG_UINT)
			printf("range %llu..%llu", (unsigned long long)k->min, (unsigned long long)k->max);
		else if (k->type == CFG_INT)
			printf("range %lld..%lld", (long long)k->smin, (long long)k->smax);
		else if (k->type == CFG_STRING)
			printf("text");
		else if (k->type == CFG_CHOICE || k->type == CFG_LIST) {
			printf(k->type == CFG_LIST ? "list of" : "one of");
			for (const char *const *c = k->choices; *c; c++)
				printf(" %s", *c);
		} else
			printf("absolute path");
		printf("\n    %s\n", k->doc);
	}
}

/*
 * The tick thread's watchdog, every half stale limit (at least 100 ms): if
 * the page has not been updated for stale_ns (a hung device), raise the
 * page's alarm so every reader fails with ESTALE instead of reading old
 * time; clear it when ticks resume.
 */
static void on_watch(evutil_socket_t fd, short what, void *arg)
{
	struct clockd *cd = arg;
	uint64_t u = __atomic_load_n(&cd->tk.updates, __ATOMIC_RELAXED);
	int64_t now = kclock_ns(CLOCK_MONOTONIC);
	uint32_t alarm = __atomic_load_n(&cd->pf.pg->alarm, __ATOMIC_RELAXED);

	if (u != cd->watch_updates) {
		cd->watch_updates = u;
		cd->watch_progress_ns = now;
		if (alarm & CLOCKD_ALARM_TICK_STOPPED) {
			__atomic_store_n(&cd->pf.pg->alarm, alarm & ~CLOCKD_ALARM_TICK_STOPPED, __ATOMIC_RELEASE);
			log_notice("tick: ticking again; alarm cleared");
		}
		return;
	}
	if (!(alarm & CLOCKD_ALARM_TICK_STOPPED) && now - cd->watch_progress_ns > (int64_t)cd->tk.stale_ns) {
		__atomic_store_n(&cd->pf.pg->alarm, alarm | CLOCKD_ALARM_TICK_STOPPED, __ATOMIC_RELEASE);
		log_warnx("tick: no update for %lld ms; alarm raised, readers get ESTALE",
			  (long long)((now - cd->watch_progress_ns) / 1000000));
	}
}

static void on_stop(evutil_socket_t sig, short what, void *arg)
{
	struct clockd *cd = arg;

	log_info("signal %d: stopping", (int)sig);
	sd_notify(0, "STOPPING=1");
	event_base_loopbreak(cd->base);
}

/*
 * The effective configuration: the embedded defaults, the file (if any),
 * then the -o overrides, then the checks between keys. All or nothing:
 * 0 with @out filled, or -1 after reporting every error.
 */
static int config_build(const struct clockd *cd, struct clockd_config *out)
{
	struct clockd_config cfg;
	char why[256];

	config_defaults(&cfg);
	if (cd->config_path && config_load(&cfg, cd->config_path, stderr) < 0)
		return -1;
	for (int i = 0; i < cd->noverrides; i++) {
		char *eq = strchr(cd->overrides[i], '=');

		*eq = '\0';
		if (config_set(&cfg, cd->overrides[i], eq + 1, why, sizeof(why)) < 0) {
			*eq = '=';
			log_warnx("-o %s: %s", cd->overrides[i], why);
			return -1;
		}
		*eq = '=';
	}
	if (config_check(&cfg, why, sizeof(why)) < 0) {
		log_warnx("configuration: %s", why);
		return -1;
	}
	*out = cfg;
	return 0;
}

static int log_level_of(const struct clockd *cd, const struct clockd_config *cfg)
{
	return cd->debug ? LOG_DEBUG : log_level_from_name(cfg->log_level);
}

/* SIGHUP: rebuild the configuration; all or nothing. Only log_level applies
 * at once; other changes are reported as needing a restart. */
static void on_reload(evutil_socket_t sig, short what, void *arg)
{
	struct clockd *cd = arg;
	struct clockd_config next;

	sd_notifyf(0, "RELOADING=1\nMONOTONIC_USEC=%lld", (long long)(kclock_ns(CLOCK_MONOTONIC) / 1000));
	if (config_build(cd, &next) < 0) {
		log_warnx("reload: configuration rejected; the running one is unchanged");
		goto out;
	}
	for (size_t i = 0; i < config_table_len; i++) {
		const struct config_key *k = &config_table[i];

		if (memcmp((const char *)&next + k->offset, (const char *)&cd->cfg + k->offset, k->size) == 0)
			continue;
		if (strcmp(k->name, "log_level") == 0) {
			memcpy(cd->cfg.log_level, next.log_level, sizeof(next.log_level));
			log_set_level(log_level_of(cd, &cd->cfg));
			log_notice("reload: log_level is now %s%s", next.log_level,
				   cd->debug ? " (debug kept by -d)" : "");
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
	int c;

	while ((c = getopt_long(argc, argv, "c:o:dhV", opts, NULL)) != -1) {
		switch (c) {
		case 'c': cd->config_path = optarg; break;
		case 'o':
			if (cd->noverrides == MAX_OVERRIDES)
				fatalx("-o: more than %d overrides", MAX_OVERRIDES);
			if (!strchr(optarg, '='))
				fatalx("-o %s: expected KEY=VALUE", optarg);
			cd->overrides[cd->noverrides++] = optarg;
			break;
		case 'C': *check_only = true; break;
		case 'K': help_config(); exit(EXIT_SUCCESS);
		case 'd': cd->debug = true; break;
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
	if (!cd->config_path && access(CONFIG_DEFAULT_PATH, F_OK) == 0)
		cd->config_path = CONFIG_DEFAULT_PATH;
	if (config_build(cd, &cd->cfg) < 0)
		fatalx("%s: configuration rejected", cd->config_path ? cd->config_path : "command line");
	log_set_level(log_level_of(cd, &cd->cfg));
}

static void setup_events(struct clockd *cd)
{
	struct event_config *ec = event_config_new();

	/* The main loop serves signals (and, later, the control socket); the
	 * tick has its own thread. libevent's default monotonic clock is the
	 * coarse one: any libevent timer added here must be precise. */
	if (!ec || event_config_set_flag(ec, EVENT_BASE_FLAG_PRECISE_TIMER) < 0)
		fatalx("libevent: cannot configure the event base");
	cd->base = event_base_new_with_config(ec);
	event_config_free(ec);
	if (!cd->base)
		fatalx("libevent: cannot create the event base");
	cd->ev_term = evsignal_new(cd->base, SIGTERM, on_stop, cd);
	cd->ev_int = evsignal_new(cd->base, SIGINT, on_stop, cd);
	cd->ev_hup = evsignal_new(cd->base, SIGHUP, on_reload, cd);
	cd->ev_watch = event_new(cd->base, -1, EV_PERSIST, on_watch, cd);
	/* Half the stale limit, but not more often than 10 times a second: a
	 * wake-up costs tens of microseconds on a virtual machine. */
	uint64_t period = cd->tk.stale_ns / 2 > WATCH_MIN_NS ? cd->tk.stale_ns / 2 : WATCH_MIN_NS;
	struct timeval half = { .tv_sec = (time_t)(period / NSEC_PER_SEC),
				.tv_usec = (suseconds_t)(period % NSEC_PER_SEC / 1000) };

	cd->watch_progress_ns = kclock_ns(CLOCK_MONOTONIC);
	if (!cd->ev_term || !cd->ev_int || !cd->ev_hup || !cd->ev_watch ||
	    event_add(cd->ev_watch, &half) < 0 || event_add(cd->ev_term, NULL) < 0 ||
	    event_add(cd->ev_int, NULL) < 0 || event_add(cd->ev_hup, NULL) < 0)
		fatalx("libevent: cannot add events");
}

/* "0,2-3" for the messages. */
static void cpu_mask_text(uint64_t mask, char *buf, size_t len)
{
	size_t o = 0;

	buf[0] = '\0';
	for (unsigned c = 0; c < 64 && o < len; c++) {
		unsigned e = c;

		if (!(mask >> c & 1))
			continue;
		while (e + 1 < 64 && (mask >> (e + 1) & 1))
			e++;
		o += (size_t)(e == c ? snprintf(buf + o, len - o, "%s%u", o ? "," : "", c)
				     : snprintf(buf + o, len - o, "%s%u-%u", o ? "," : "", c, e));
		c = e;
	}
}

/*
 * The CPUs of timer_cpus within the daemon's affinity: "all" is the
 * affinity itself; a listed CPU outside it is an error naming it.
 */
static int timer_cpu_mask(const struct clockd_config *cfg, uint64_t *out)
{
	uint64_t want, allowed = 0;
	char why[128], text[256];
	cpu_set_t set;

	if (config_cpu_list(cfg->timer_cpus, &want, why, sizeof(why)) < 0) {
		log_warnx("timer_cpus: %s", why);
		return -1;
	}
	if (sched_getaffinity(0, sizeof(set), &set) < 0) {
		log_warn("timer_cpus: sched_getaffinity");
		return -1;
	}
	for (unsigned c = 0; c < CONFIG_MAX_CPUS; c++)
		if (CPU_ISSET(c, &set))
			allowed |= 1ull << c;
	if (strcmp(cfg->timer_cpus, "all") != 0 && (want & ~allowed)) {
		cpu_mask_text(want & ~allowed, why, sizeof(why));
		cpu_mask_text(allowed, text, sizeof(text));
		log_warnx("timer_cpus: CPU %s outside the daemon's CPU affinity (%s)", why, text);
		return -1;
	}
	*out = want & allowed;
	if (!*out) {
		log_warnx("timer_cpus: no CPU of the daemon's affinity below %d", CONFIG_MAX_CPUS);
		return -1;
	}
	return 0;
}

/*
 * The timer bases and the control socket, once the page is live: the
 * bases read the clockd clocks through libclockd, like their clients.
 */
static void timers_start(struct clockd *cd)
{
	const struct clockd_config *cfg = &cd->cfg;
	struct tb_params tp = {
		.priority = (int)cfg->timer_priority,
		.hz = cfg->hz,
		.ring_slots = cfg->timer_ring_slots,
		.max_timers = cfg->client_max_timers,
		.lead_ns = cfg->timer_lead_ns,
	};
	char sock[sizeof(cfg->control_socket)];
	struct ctlserver_params sp = {
		.path = sock,
		.max_clients = cfg->max_clients,
		.max_msgs_per_sec = cfg->client_max_msgs_per_sec,
		.max_timers = cfg->client_max_timers,
		.ring_slots = cfg->timer_ring_slots,
	};
	char cpus[256];

	if (cfg->control_socket[0])
		snprintf(sock, sizeof(sock), "%s", cfg->control_socket);
	else if (socket_beside_page(cfg->page, sock, sizeof(sock)) < 0)
		fatalx("page %s: the control socket beside it would be longer than %zu bytes; "
		       "set control_socket", cfg->page, sizeof(sock) - 1);
	if (setenv("CLOCKD_SHM", cfg->page, 1) < 0)
		fatal("setenv CLOCKD_SHM");
	clockd_set_fallback(1);
	if (timer_cpu_mask(cfg, &tp.cpu_mask) < 0)
		fatalx("timer_cpus %s: cannot start the timer bases", cfg->timer_cpus);
	if (timer_bases_start(&cd->tb, &tp) < 0)
		fatalx("cannot start the timer bases; see the messages above");
	ticker_set_bases(&cd->ticker, cd->tb);
	cpu_mask_text(tp.cpu_mask, cpus, sizeof(cpus));
	if (ctlserver_open(&cd->srv, cd->base, cd->tb, &sp) < 0)
		fatalx("control socket %s: cannot serve it; see the messages above", sock);
	log_info("timers: bases on CPUs %s, control socket %s", cpus, sock);
}

/* The server first (no new requests), then the bases (the tick thread
 * stops telling them first), then the tick thread. */
static void timers_stop(struct clockd *cd)
{
	ctlserver_close(cd->srv);
	cd->srv = NULL;
	if (cd->tb) {
		ticker_set_bases(&cd->ticker, NULL);
		timer_bases_stop(cd->tb);
		cd->tb = NULL;
	}
}

static void teardown(struct clockd *cd)
{
	timers_stop(cd);
	reference_stop(&cd->ref);
	ticker_stop(&cd->ticker);
	export_close(&cd->ex);
	event_free(cd->ev_watch);
	event_free(cd->ev_term);
	event_free(cd->ev_int);
	event_free(cd->ev_hup);
	event_base_free(cd->base);
	pagefile_close(&cd->pf);
	reference_close(&cd->ref);
	devices_close(&cd->dv);
}

int main(int argc, char **argv)
{
	struct clockd cd = { 0 };
	bool check_only = false;
	struct clocksource *cs;
	struct tick_device *td;

	log_init("clockd", LOG_INFO);
	parse_args(&cd, argc, argv, &check_only);
	if (check_only) {
		config_write(stdout, &cd.cfg);
		fprintf(stderr, "clockd: configuration %s is valid\n",
			cd.config_path ? cd.config_path : "(embedded defaults)");
		return EXIT_SUCCESS;
	}
	if (export_open(&cd.ex, &cd.cfg) < 0)
		fatalx("cannot export to chronyd/ntpd as configured; see the messages above");
	if (devices_open(&cd.dv, &cd.cfg) < 0)
		fatalx("no usable device; see the messages above");
	if (reference_open(&cd.ref, &cd.cfg) < 0)
		fatalx("reference %s: see the messages above", cd.cfg.reference);
	if (cd.ref.name)
		devices_add_reference(&cd.dv, cd.ref.name, cd.ref.device);
	cs = devices_source(&cd.dv);
	td = devices_tick(&cd.dv);
	if (pagefile_open(&cd.pf, cd.cfg.page) < 0)
		fatalx("%s: cannot use the time page", cd.cfg.page);
	devices_attach(&cd.dv, cd.pf.pg);
	if (tk_init(&cd.tk, &cd.pf, cs, &cd.cfg, td->ops->name, td->self_paced) < 0)
		fatalx("timekeeper set-up failed");
	discipline_init(&cd.disc, &cd.tk, cd.pf.pg, &cd.ref, &cd.cfg);
	setup_events(&cd);
	/* From ticker_start on, the timekeeper and the devices belong to the
	 * tick thread. */
	log_info("running: source %s, tick %s, HZ %u, page %s, jiffies %llu",
		 cs->ops->name, td->ops->name, cd.cfg.hz, cd.cfg.page,
		 (unsigned long long)cd.tk.jiffies);
	sd_notifyf(0, "STATUS=source %s, tick %s, HZ %u", cs->ops->name, td->ops->name, cd.cfg.hz);
	cd.ticker.ref = &cd.ref;
	cd.ticker.disc = &cd.disc;
	cd.ticker.ex = &cd.ex;
	if (ticker_start(&cd.ticker, &cd.dv, &cd.tk, &cd.pf) < 0)
		fatalx("%s: cannot start ticking", cd.cfg.page);
	/* After the tick thread: it installs the wake-up signal both use. */
	if (reference_start(&cd.ref) < 0)
		fatalx("reference %s: cannot start", cd.cfg.reference);
	timers_start(&cd);
	sd_notify(0, "READY=1");
	event_base_dispatch(cd.base);
	teardown(&cd);
	return EXIT_SUCCESS;
}
