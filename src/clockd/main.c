/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * clockd: the daemon. Set-up is fatal on error; at run time errors are
 * logged and the daemon carries on.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <linux/capability.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include <event2/event.h>
#include <systemd/sd-daemon.h>


#include "clockd/ctlserver.h"
#include "clockd/devices.h"
#include "clockd/discipline.h"
#include "clockd/references/reference.h"
#include "clockd/ticks/gpioline.h"
#include "clockd/export.h"
#include "clockd/pagefile.h"
#include "clockd/params.h"
#include "clockd/safepath.h"
#include "clockd/tickthread.h"
#include "clockd/timekeeper.h"
#include "clockd/reloadstat.h"
#include "clockd/statlog.h"
#include "clockd/timers/timerbase.h"
#include "shared/config.h"
#include "shared/log.h"
#include "shared/paths.h"
#include "shared/tickmath.h"

#define MAX_OVERRIDES 64
#define WATCH_MIN_NS 100000000ull /* the tick watchdog's shortest period */

struct clockd {
	struct clockd_config cfg;
	struct clockd_params p;  /* what each module takes of cfg */
	const char *config_path; /* NULL: embedded defaults */
	char *overrides[MAX_OVERRIDES]; /* -o KEY=VALUE, applied over the file */
	int noverrides;
	bool debug;
	struct event_base *base;
	struct event *ev_term, *ev_int, *ev_hup, *ev_watch;
	uint64_t watch_updates;   /* tk.updates at the last progress seen */
	int64_t watch_progress_ns; /* kernel CLOCK_MONOTONIC of that */
	bool watch_stalled;        /* no update for stale_ns: said so (STATUS=) */
	uint64_t watch_period_ns;  /* how often on_watch runs */
	uint64_t wd_interval_ns;   /* WATCHDOG=1 this often while ticking; 0: off */
	int64_t wd_last_ns;        /* the last WATCHDOG=1 */
	const char *src_name, *tick_name; /* as started, for STATUS= */
	const char *state;         /* for STATUS=: starting, live, tick stalled... */
	uid_t run_uid;             /* who the daemon runs as once set up */
	gid_t run_gid;
	const char *run_user;      /* NULL: stays as started */
	gid_t page_gid, socket_gid;
	char ctl_path[108];        /* the control socket */
	struct reloadstat rs;      /* the last reload's outcome, for clockctl */
	FILE *reload_msgs;         /* during a reload: what it says, for rs */
	struct statlog statlog;    /* logdir's statistics logs */
	int ctl_fd;                /* bound or passed, until served */
	bool ctl_owned;            /* bound here (not passed by systemd) */
	struct devices dv;
	struct pagefile pf;
	struct timekeeper tk;
	struct tickthread tickthread;
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

/* The version, and the drivers built in (gpio needs libgpiod at build
 * time): what a config may name. */
static void version(void)
{
	printf("clockd %s\nsources:", PACKAGE_VERSION);
	for (size_t i = 0; clocksource_drivers[i]; i++)
		printf(" %s", clocksource_drivers[i]->name);
	printf("\nticks:");
	for (size_t i = 0; tick_drivers[i]; i++)
		printf(" %s", tick_drivers[i]->name);
	printf("\nreferences: none");
	for (size_t i = 0; reference_drivers[i]; i++)
		printf(" %s", reference_drivers[i]->name);
	printf("\n");
#ifdef HAVE_LIBGPIOD
	/* The library loaded at run time, which may be newer than the
	 * headers it was built with, and the API the driver was built on. */
	printf("libgpiod: %s\n", gpioline_library());
#endif
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

/* STATUS= for systemctl status: the state, then what runs. */
static void notify_status(struct clockd *cd, const char *state)
{
	cd->state = state;
	sd_notifyf(0, "STATUS=%s: source %s, tick %s, HZ %u", state, cd->src_name, cd->tick_name,
		   cd->cfg.hz);
}

/* WATCHDOG=1, called by on_watch only when it saw the tick make progress:
 * a hung tick thread stops the pings and systemd's watchdog fires. Spaced
 * by wd_interval_ns, give or take one on_watch period. */
static void watchdog_ping(struct clockd *cd, int64_t now)
{
	uint64_t gap = cd->wd_interval_ns > cd->watch_period_ns ? cd->wd_interval_ns - cd->watch_period_ns : 0;

	if (!cd->wd_interval_ns || now - cd->wd_last_ns < (int64_t)gap)
		return;
	sd_notify(0, "WATCHDOG=1");
	cd->wd_last_ns = now;
}

/*
 * The tick thread's watchdog, every half stale limit (at least 100 ms): if
 * the page has not been updated for the extrapolation bound (a hung
 * device, a thread starved that long), raise the page's alarm so every
 * reader fails with ESTALE instead of reading time extrapolated too far;
 * clear it when ticks resume. A shorter silence is not an alarm: readers
 * extrapolate through it, as from the vDSO. STATUS= follows the alarm, and
 * only a check that saw progress pings systemd's watchdog.
 */
static void on_watch(evutil_socket_t fd, short what, void *arg)
{
	struct clockd *cd = arg;
	uint64_t u = __atomic_load_n(&cd->tk.updates, __ATOMIC_RELAXED);
	int64_t now = kclock_ns(CLOCK_MONOTONIC);

	if (u != cd->watch_updates) {
		cd->watch_updates = u;
		cd->watch_progress_ns = now;
		/* Atomic read-modify-write: the tick thread sets and clears
		 * the source bit of the same word meanwhile. */
		if (pagefile_alarm_clear(&cd->pf, CLOCKD_ALARM_TICK_STOPPED) & CLOCKD_ALARM_TICK_STOPPED)
			log_notice("tick: ticking again; alarm cleared");
		else if (cd->watch_stalled)
			log_notice("tick: ticking again");
		if (cd->watch_stalled)
			notify_status(cd, "live");
		cd->watch_stalled = false;
		watchdog_ping(cd, now);
		statlog_poll(&cd->statlog, &cd->pf, cd->tb);
		return;
	}
	if (now - cd->watch_progress_ns > (int64_t)cd->tk.stale_ns && !cd->watch_stalled) {
		cd->watch_stalled = true;
		log_warnx("tick: no update for %lld ms; readers extrapolate for up to %llu ms",
			  (long long)((now - cd->watch_progress_ns) / 1000000),
			  (unsigned long long)(cd->tk.extrap_max_ns / 1000000));
		notify_status(cd, "tick stalled");
	}
	if (now - cd->watch_progress_ns > (int64_t)cd->tk.extrap_max_ns &&
	    !(pagefile_alarm_raise(&cd->pf, CLOCKD_ALARM_TICK_STOPPED) & CLOCKD_ALARM_TICK_STOPPED))
		log_warnx("tick: no update for %lld ms, past the extrapolation bound; alarm raised, readers get ESTALE",
			  (long long)((now - cd->watch_progress_ns) / 1000000));
}

static void on_stop(evutil_socket_t sig, short what, void *arg)
{
	struct clockd *cd = arg;

	log_info("signal %d: stopping", (int)sig);
	notify_status(cd, "stopping");
	sd_notify(0, "STOPPING=1");
	event_base_loopbreak(cd->base);
}

typedef int config_loader(struct clockd_config *cfg, const char *path, FILE *errs);

/* A configuration error: logged, and during a reload kept for its
 * record (clockctl reload prints it). */
static void __attribute__((format(printf, 2, 3))) build_warn(const struct clockd *cd, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	log_warnx("%s", line);
	if (cd->reload_msgs)
		fprintf(cd->reload_msgs, "%s\n", line);
}

/* config_load or config_load_dir with their "FILE:LINE: KEY: why" lines
 * as they are on a terminal, and through the log for the journal (which
 * files them as warnings, with the "<N>" prefix); during a reload, also
 * into its record. */
static int load_with(const struct clockd *cd, config_loader *load, const char *path,
		     struct clockd_config *cfg)
{
	char *text = NULL, *line, *save = NULL;
	size_t len = 0;
	FILE *errs;
	int r;

	if (!log_to_journal() && !cd->reload_msgs)
		return load(cfg, path, stderr);
	errs = open_memstream(&text, &len);
	r = load(cfg, path, errs ? errs : stderr);
	if (!errs)
		return r;
	fclose(errs);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (log_to_journal())
			log_warnx("%s", line);
		else
			fprintf(stderr, "%s\n", line);
		if (cd->reload_msgs)
			fprintf(cd->reload_msgs, "%s\n", line);
	}
	free(text);
	return r;
}

/*
 * The drop-in directory into @dir, from -o confdir= if given, else from
 * the file: empty is the main file's path (or the default one) with ".d"
 * appended. false when off.
 */
static bool dropin_dir(const struct clockd *cd, const struct clockd_config *cfg, char *dir, size_t len)
{
	const char *v = cfg->confdir;

	for (int i = 0; i < cd->noverrides; i++)
		if (strncmp(cd->overrides[i], "confdir=", 8) == 0)
			v = cd->overrides[i] + 8;
	if (strcmp(v, "off") == 0)
		return false;
	if (*v)
		snprintf(dir, len, "%s", v);
	else
		snprintf(dir, len, "%s.d", cd->config_path ? cd->config_path : CONFIG_DEFAULT_PATH);
	return true;
}

/*
 * The effective configuration: the embedded defaults, the file (if any)
 * and the files it includes, the drop-in directory's files, then the -o
 * overrides, then the checks between keys. All or nothing: 0 with @out
 * filled, or -1 after reporting every error.
 */
static int config_build(const struct clockd *cd, struct clockd_config *out)
{
	struct clockd_config cfg;
	char why[256], dir[CONFIG_PATH_MAX];

	config_defaults(&cfg);
	if (cd->config_path && load_with(cd, config_load, cd->config_path, &cfg) < 0)
		return -1;
	if (dropin_dir(cd, &cfg, dir, sizeof(dir)) && load_with(cd, config_load_dir, dir, &cfg) < 0)
		return -1;
	for (int i = 0; i < cd->noverrides; i++) {
		char *eq = strchr(cd->overrides[i], '=');

		*eq = '\0';
		if (config_set(&cfg, cd->overrides[i], eq + 1, why, sizeof(why)) < 0) {
			*eq = '=';
			build_warn(cd, "-o %s: %s", cd->overrides[i], why);
			return -1;
		}
		*eq = '=';
	}
	if (config_check(&cfg, why, sizeof(why)) < 0) {
		build_warn(cd, "configuration: %s", why);
		return -1;
	}
	*out = cfg;
	return 0;
}

static int log_level_of(const struct clockd *cd, const struct clockd_config *cfg)
{
	return cd->debug ? LOG_DEBUG : log_level_from_name(cfg->log_level);
}

/* A reload's message: logged at notice and kept for its record. */
static void __attribute__((format(printf, 2, 3))) reload_note(struct clockd *cd, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	log_notice("reload: %s", line);
	if (cd->reload_msgs)
		fprintf(cd->reload_msgs, "%s\n", line);
}

/* The new configuration against the running one: log_level applies at
 * once, other changes are named as needing a restart. How many keys
 * changed. */
static unsigned reload_apply(struct clockd *cd, const struct clockd_config *next)
{
	unsigned changed = 0;

	for (size_t i = 0; i < config_table_len; i++) {
		const struct config_key *k = &config_table[i];

		if (memcmp((const char *)next + k->offset, (const char *)&cd->cfg + k->offset, k->size) == 0)
			continue;
		changed++;
		if (strcmp(k->name, "log_level") == 0) {
			memcpy(cd->cfg.log_level, next->log_level, sizeof(next->log_level));
			log_set_level(log_level_of(cd, &cd->cfg));
			reload_note(cd, "log_level is now %s%s", next->log_level,
				    cd->debug ? " (debug kept by -d)" : "");
		} else {
			reload_note(cd, "%s changed; it takes effect at the next restart", k->name);
		}
	}
	return changed;
}

/* SIGHUP: rebuild the configuration; all or nothing. The outcome, with
 * every message, goes to the reload record for clockctl reload. */
static void on_reload(evutil_socket_t sig, short what, void *arg)
{
	struct clockd *cd = arg;
	struct clockd_config next;
	const char *state = cd->state, *result;
	char *msgs = NULL;
	size_t len = 0;

	sd_notifyf(0, "RELOADING=1\nMONOTONIC_USEC=%lld", (long long)(kclock_ns(CLOCK_MONOTONIC) / 1000));
	notify_status(cd, "reloading");
	cd->reload_msgs = open_memstream(&msgs, &len);
	if (config_build(cd, &next) < 0) {
		build_warn(cd, "reload: configuration rejected; the running one is unchanged");
		result = "rejected";
	} else if (reload_apply(cd, &next) == 0) {
		reload_note(cd, "no change");
		result = "unchanged";
	} else {
		result = "applied";
	}
	if (cd->reload_msgs)
		fclose(cd->reload_msgs);
	cd->reload_msgs = NULL;
	reloadstat_write(&cd->rs, result, msgs);
	statlog_reopen(&cd->statlog); /* log rotation */
	free(msgs);
	notify_status(cd, state);
	sd_notify(0, "READY=1");
}

/* The statistics logs of logdir and log (the key was checked). */
static void statlog_start(struct clockd *cd)
{
	struct statlog_params p = { 0 };
	char why[128];

	snprintf(p.dir, sizeof(p.dir), "%s", cd->cfg.logdir);
	if (statlog_parse(cd->cfg.log_kinds, p.kind, why, sizeof(why)) < 0)
		fatalx("log: %s", why);
	statlog_open(&cd->statlog, &p, cd->run_uid, cd->run_gid);
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
		case 'V': version(); exit(EXIT_SUCCESS);
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
	/* Half the stale limit (and half the watchdog interval, so that a
	 * ping is never late by more than that), but not more often than 10
	 * times a second: a wake-up costs tens of microseconds on a virtual
	 * machine. */
	uint64_t period = cd->tk.stale_ns / 2;

	if (cd->wd_interval_ns && cd->wd_interval_ns / 2 < period)
		period = cd->wd_interval_ns / 2;
	if (period < WATCH_MIN_NS)
		period = WATCH_MIN_NS;
	cd->watch_period_ns = period;

	struct timeval half = { .tv_sec = (time_t)(period / NSEC_PER_SEC),
				.tv_usec = (suseconds_t)(period % NSEC_PER_SEC / 1000) };

	cd->watch_progress_ns = kclock_ns(CLOCK_MONOTONIC);
	if (!cd->ev_term || !cd->ev_int || !cd->ev_hup || !cd->ev_watch ||
	    event_add(cd->ev_watch, &half) < 0 || event_add(cd->ev_term, NULL) < 0 ||
	    event_add(cd->ev_int, NULL) < 0 || event_add(cd->ev_hup, NULL) < 0)
		fatalx("libevent: cannot add events");
}

/*
 * The systemd watchdog: with watchdog = auto and $WATCHDOG_USEC set (for
 * this process), ping at half its period. Read before the events, whose
 * period follows it.
 */
static void watchdog_setup(struct clockd *cd)
{
	uint64_t usec = 0;
	int r;

	if (strcmp(cd->cfg.watchdog, "off") == 0)
		return;
	r = sd_watchdog_enabled(0, &usec);
	if (r < 0) {
		errno = -r;
		log_warn("watchdog: cannot read $WATCHDOG_USEC; no watchdog pings");
		return;
	}
	if (r == 0)
		return;
	cd->wd_interval_ns = usec * 1000 / 2;
	if (cd->wd_interval_ns < 2 * WATCH_MIN_NS)
		log_warnx("watchdog: %llu ms is too short for clockd's checks (every %llu ms); "
			  "expect it to fire", (unsigned long long)(usec / 1000),
			  (unsigned long long)(WATCH_MIN_NS / 1000000));
	log_info("watchdog: WATCHDOG=1 every %llu ms while the tick advances",
		 (unsigned long long)(cd->wd_interval_ns / 1000000));
}

/* ---- identity and privileges ---- */

/* A group by name or number; a start error if there is none. */
static gid_t group_id(const char *key, const char *name)
{
	struct group *gr = getgrnam(name);
	char *end;
	unsigned long n;

	if (gr)
		return gr->gr_gid;
	n = strtoul(name, &end, 10);
	if (*name && !*end && n < (gid_t)-1)
		return (gid_t)n;
	fatalx("%s %s: no such group", key, name);
}

/*
 * Who the daemon runs as (user, group) and the groups of the page and the
 * socket (empty: the group it runs as), looked up before anything is
 * opened: an unknown name is a start error, not a half-started daemon.
 */
static void resolve_identity(struct clockd *cd)
{
	const struct clockd_config *cfg = &cd->cfg;

	cd->run_uid = geteuid();
	cd->run_gid = getegid();
	if (cfg->user[0]) {
		struct passwd *pw = getpwnam(cfg->user);

		if (!pw)
			fatalx("user %s: no such user", cfg->user);
		cd->run_user = cfg->user;
		cd->run_uid = pw->pw_uid;
		cd->run_gid = pw->pw_gid;
	}
	if (cfg->group[0])
		cd->run_gid = group_id("group", cfg->group);
	cd->page_gid = cfg->page_group[0] ? group_id("page_group", cfg->page_group) : cd->run_gid;
	cd->socket_gid = cfg->socket_group[0] ? group_id("socket_group", cfg->socket_group) : cd->run_gid;
}

/* The capability sets of this thread (and of the threads it starts) to
 * exactly @keep (bits of CAP_*), inheritable none. */
static void set_caps(uint64_t keep)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = { 0 };

	data[0].effective = data[0].permitted = (uint32_t)keep;
	data[1].effective = data[1].permitted = (uint32_t)(keep >> 32);
	if (syscall(SYS_capset, &hdr, data) < 0)
		fatal("capset");
}

/* The bounding set down to @keep, so that not even an exec could regain
 * more. Needs CAP_SETPCAP: without it (a container) the unit's
 * CapabilityBoundingSet= is the bound, and we say so. */
static void drop_bounding(uint64_t keep)
{
	for (unsigned c = 0; c < 64; c++) {
		if (keep >> c & 1)
			continue;
		if (prctl(PR_CAPBSET_DROP, (unsigned long)c, 0L, 0L, 0L) < 0) {
			if (errno != EINVAL)
				log_warn("cannot drop capability %u from the bounding set", c);
			return; /* EINVAL: past the kernel's last capability */
		}
	}
}

/*
 * After the devices, the page and the socket are open, and before any
 * thread starts (capabilities are per thread; threads inherit them): run
 * as user/group, keeping only CAP_SYS_NICE, and only when the timer
 * threads or the tick thread use SCHED_FIFO. With neither user nor group
 * set, nothing changes (the daemon stays as started).
 */
static void drop_privileges(const struct clockd *cd)
{
	const struct clockd_config *cfg = &cd->cfg;
	uint64_t keep = cfg->timer_priority > 0 || cfg->tick_priority > 0 ? 1ull << CAP_SYS_NICE : 0;

	if (!cfg->user[0] && !cfg->group[0])
		return;
	if (geteuid() != 0) {
		if (cd->run_uid == geteuid() && cd->run_gid == getegid())
			return;
		fatalx("user %s, group %s: only root can switch to them", cfg->user[0] ? cfg->user : "-",
		       cfg->group[0] ? cfg->group : "-");
	}
	drop_bounding(keep);
	if (prctl(PR_SET_KEEPCAPS, 1L, 0L, 0L, 0L) < 0)
		fatal("prctl PR_SET_KEEPCAPS");
	if ((cd->run_user ? initgroups(cd->run_user, cd->run_gid) : setgroups(0, NULL)) < 0)
		fatal("cannot set the supplementary groups");
	if (setresgid(cd->run_gid, cd->run_gid, cd->run_gid) < 0)
		fatal("cannot switch to gid %lu", (unsigned long)cd->run_gid);
	if (setresuid(cd->run_uid, cd->run_uid, cd->run_uid) < 0)
		fatal("cannot switch to uid %lu", (unsigned long)cd->run_uid);
	if (prctl(PR_SET_KEEPCAPS, 0L, 0L, 0L, 0L) < 0)
		fatal("prctl PR_SET_KEEPCAPS");
	set_caps(keep);
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0L, 0L, 0L);
	log_info("privileges: running as uid %lu gid %lu, capabilities: %s", (unsigned long)cd->run_uid,
		 (unsigned long)cd->run_gid, keep ? "cap_sys_nice (timer_priority, tick_priority)" : "none");
}

/*
 * The control socket, before privileges go: the one systemd passed
 * (clockd.socket; sd_listen_fds), else bound here at control_socket (or
 * "control" beside the page), mode 0660, group socket_group. It is served
 * once the timer bases run (timers_start).
 */
static void control_socket_open(struct clockd *cd)
{
	const struct clockd_config *cfg = &cd->cfg;
	struct sockaddr_un sa;
	socklen_t salen = sizeof(sa);
	int n;

	if (cfg->control_socket[0])
		snprintf(cd->ctl_path, sizeof(cd->ctl_path), "%s", cfg->control_socket);
	else if (socket_beside_page(cfg->page, cd->ctl_path, sizeof(cd->ctl_path)) < 0)
		fatalx("page %s: the control socket beside it would be longer than %zu bytes; "
		       "set control_socket", cfg->page, sizeof(cd->ctl_path) - 1);
	n = sd_listen_fds(1);
	if (n < 0) {
		errno = -n;
		fatal("socket activation: $LISTEN_FDS");
	}
	if (n > 1)
		fatalx("socket activation: %d sockets passed; clockd serves one, its control socket", n);
	if (n == 0) {
		cd->ctl_fd = ctlserver_listen(cd->ctl_path, cd->socket_gid);
		if (cd->ctl_fd < 0)
			fatalx("control socket %s: cannot serve it; see the messages above", cd->ctl_path);
		cd->ctl_owned = true;
		return;
	}
	cd->ctl_fd = SD_LISTEN_FDS_START;
	if (sd_is_socket_unix(cd->ctl_fd, SOCK_SEQPACKET, 1, NULL, 0) <= 0)
		fatalx("socket activation: the passed socket is not a listening Unix SOCK_SEQPACKET socket");
	/* systemd passes it blocking; the accept loop needs it not to be. */
	if (fcntl(cd->ctl_fd, F_SETFL, fcntl(cd->ctl_fd, F_GETFL) | O_NONBLOCK) < 0 ||
	    fcntl(cd->ctl_fd, F_SETFD, FD_CLOEXEC) < 0)
		fatal("socket activation: fcntl");
	if (getsockname(cd->ctl_fd, (struct sockaddr *)&sa, &salen) == 0 && salen > sizeof(sa_family_t) &&
	    sa.sun_path[0])
		snprintf(cd->ctl_path, sizeof(cd->ctl_path), "%.*s",
			 (int)(salen - offsetof(struct sockaddr_un, sun_path)), sa.sun_path);
	log_info("control: socket %s passed by systemd", cd->ctl_path);
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

/* The timekeeper's in-process clock, as the timer bases take it. */
static int bases_now_ns(void *tk, bool realtime, uint64_t *ns)
{
	return tk_clock_ns(tk, realtime, ns);
}

static uint64_t bases_jiffies(void *tk)
{
	return tk_clock_jiffies(tk);
}

/*
 * The timer bases and the control socket, once the page is live: the
 * bases read the clockd clocks from the timekeeper's page in-process, as
 * their clients read them.
 */
static void timers_start(struct clockd *cd)
{
	const struct clockd_config *cfg = &cd->cfg;
	struct tb_params *tp = &cd->p.tb;
	struct ctlserver_params *sp = &cd->p.srv;
	char cpus[256];

	sp->path = cd->ctl_path;
	sp->owns_path = cd->ctl_owned;
	if (cfg->stats_group[0])
		sp->stats_gid = group_id("stats_group", cfg->stats_group);
	tp->clock = (struct tb_clock){ .now_ns = bases_now_ns, .jiffies = bases_jiffies, .ctx = &cd->tk };
	if (timer_cpu_mask(cfg, &tp->cpu_mask) < 0)
		fatalx("timer_cpus %s: cannot start the timer bases", cfg->timer_cpus);
	if (timer_bases_start(&cd->tb, tp) < 0)
		fatalx("cannot start the timer bases; see the messages above");
	tickthread_set_bases(&cd->tickthread, cd->tb);
	cpu_mask_text(tp->cpu_mask, cpus, sizeof(cpus));
	/* ctlserver_adopt closes the fd on failure. */
	if (ctlserver_adopt(&cd->srv, cd->base, cd->tb, sp, cd->ctl_fd) < 0)
		fatalx("control socket %s: cannot serve it; see the messages above", cd->ctl_path);
	cd->ctl_fd = -1;
	log_info("timers: bases on CPUs %s, control socket %s (max_clients %u, %u per user, %u msgs/s, "
		 "%u timers per client)", cpus, cd->ctl_path, cfg->max_clients, cfg->max_clients_per_user,
		 cfg->client_max_msgs_per_sec, cfg->client_max_timers);
}

/* The server first (no new requests), then the bases (the tick thread
 * stops telling them first), then the tick thread. */
static void timers_stop(struct clockd *cd)
{
	ctlserver_close(cd->srv);
	cd->srv = NULL;
	if (cd->tb) {
		tickthread_set_bases(&cd->tickthread, NULL);
		timer_bases_stop(cd->tb);
		cd->tb = NULL;
	}
}

static void teardown(struct clockd *cd)
{
	timers_stop(cd);
	reference_stop(&cd->ref);
	tickthread_stop(&cd->tickthread);
	export_close(&cd->ex);
	event_free(cd->ev_watch);
	event_free(cd->ev_term);
	event_free(cd->ev_int);
	event_free(cd->ev_hup);
	event_base_free(cd->base);
	reloadstat_close(&cd->rs);
	statlog_close(&cd->statlog);
	pagefile_close(&cd->pf);
	reference_close(&cd->ref);
	devices_close(&cd->dv);
}

/* The devices, the reference, the page and the timekeeper: everything
 * that may fail at start, fatal then. */
static void open_clock(struct clockd *cd)
{
	struct clocksource *cs;
	struct tick_device *td;

	params_from_config(&cd->cfg, &cd->p);
	if (export_open(&cd->ex, &cd->p.ex) < 0)
		fatalx("cannot export to chronyd/ntpd as configured; see the messages above");
	if (devices_open(&cd->dv, &cd->p.devices) < 0)
		fatalx("no usable device; see the messages above");
	if (reference_open(&cd->ref, &cd->p.ref) < 0)
		fatalx("reference %s: see the messages above", cd->cfg.reference);
	if (cd->ref.name)
		devices_add_reference(&cd->dv, cd->ref.name, cd->ref.device);
	cs = devices_source(&cd->dv);
	td = devices_tick(&cd->dv);
	if (pagefile_open(&cd->pf, cd->cfg.page) < 0 ||
	    pagefile_set_access(&cd->pf, (mode_t)strtoul(cd->cfg.page_mode, NULL, 8), cd->page_gid) < 0)
		fatalx("%s: cannot use the time page", cd->cfg.page);
	devices_attach(&cd->dv, &cd->pf);
	if (tk_init(&cd->tk, &cd->pf, cs, &cd->p.tk, td->ops->name, td->self_paced) < 0)
		fatalx("timekeeper set-up failed");
	discipline_init(&cd->disc, &cd->tk, &cd->pf, &cd->ref, &cd->p.disc);
	cd->src_name = cs->ops->name;
	cd->tick_name = td->ops->name;
}

/* The threads: from tickthread_start on, the timekeeper and the devices
 * belong to the tick thread. */
static void start_threads(struct clockd *cd)
{
	const struct tickthread_parts parts = {
		.dv = &cd->dv, .tk = &cd->tk, .pf = &cd->pf, .ref = &cd->ref, .disc = &cd->disc, .ex = &cd->ex,
	};

	log_info("running: source %s, tick %s, HZ %u, page %s, jiffies %llu", cd->src_name, cd->tick_name,
		 cd->cfg.hz, cd->cfg.page, (unsigned long long)cd->tk.jiffies);
	notify_status(cd, "starting");
	if (tickthread_start(&cd->tickthread, &cd->p.tickthread, &parts) < 0)
		fatalx("%s: cannot start ticking", cd->cfg.page);
	/* After the tick thread: it installs the wake-up signal both use. */
	if (reference_start(&cd->ref) < 0)
		fatalx("reference %s: cannot start", cd->cfg.reference);
	timers_start(cd);
}

/* The mask we were started with is our parent's business, not ours: a
 * parent that forked with signals blocked (a library holding a lock
 * across fork()) would leave SIGTERM, SIGHUP and SIGINT blocked for good.
 * Threads started later mask what they must themselves. */
static void unblock_signals(void)
{
	sigset_t none;

	sigemptyset(&none);
	pthread_sigmask(SIG_SETMASK, &none, NULL);
}

int main(int argc, char **argv)
{
	struct clockd cd = { .ctl_fd = -1 };
	bool check_only = false;

	log_init("clockd", LOG_INFO);
	unblock_signals();
	parse_args(&cd, argc, argv, &check_only);
	if (check_only) {
		config_write(stdout, &cd.cfg);
		fprintf(stderr, "clockd: configuration %s is valid\n",
			cd.config_path ? cd.config_path : "(embedded defaults)");
		return EXIT_SUCCESS;
	}
	resolve_identity(&cd);
	safepath_trust(cd.run_uid);
	open_clock(&cd);
	control_socket_open(&cd);
	reloadstat_open(&cd.rs, cd.cfg.page, cd.run_uid, cd.run_gid);
	statlog_start(&cd);
	drop_privileges(&cd);
	watchdog_setup(&cd);
	setup_events(&cd);
	/* SCHED_FIFO for the tick and timer threads, or SCHED_OTHER with one
	 * warning: the privileges dropped decide it. */
	params_settle_sched(&cd.p);
	start_threads(&cd);
	/* Ready: the page is live (tickthread_start returned after the first
	 * publication), the timer bases run and the control socket serves. */
	cd.wd_last_ns = kclock_ns(CLOCK_MONOTONIC);
	notify_status(&cd, "live");
	sd_notify(0, "READY=1");
	event_base_dispatch(cd.base);
	teardown(&cd);
	return EXIT_SUCCESS;
}
