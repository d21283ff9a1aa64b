/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shared/config.h"
#include "shared/simscript.h"
#include "shared/tickmath.h"
#include "shared/timerrec.h"

#define FIELD(f) offsetof(struct clockd_config, f), sizeof(((struct clockd_config *)0)->f)

static const char *const source_choices[] = { "auto", "tsc", "hpet", "phc", "posix", "sim", NULL };
static const char *const posix_clock_choices[] = {
	"monotonic_raw", "monotonic", "boottime", "realtime", "tai", NULL
};
static const char *const tick_choices[] = { "timerfd", "hpet", "rtc", "gpio", "sim", NULL };
static const char *const gpio_edge_choices[] = { "rising", "falling", "both", NULL };
static const char *const reference_choices[] = { "system", "none", "sim", "gpio", "phc", "pps", NULL };
static const char *const pps_edge_choices[] = { "rising", "falling", NULL };

/* An octal file mode, at most 0777. */
static int mode_validate(const char *v, char *why, size_t len)
{
	if (!*v || strlen(v) > 4 || strspn(v, "01234567") != strlen(v) || strtoul(v, NULL, 8) > 0777) {
		snprintf(why, len, "'%s' is not an octal file mode (0 to 0777)", v);
		return -1;
	}
	return 0;
}

/* Empty (off) or an absolute path. */
static int opt_path_validate(const char *v, char *why, size_t len)
{
	if (*v && *v != '/') {
		snprintf(why, len, "'%s' is not an absolute path", v);
		return -1;
	}
	return 0;
}
/* A power of two (a ring's slot count: its index is a mask). */
static int pow2_validate(const char *v, char *why, size_t len)
{
	unsigned long long n = strtoull(v, NULL, 10);

	if (n == 0 || (n & (n - 1))) {
		snprintf(why, len, "%s is not a power of two", v);
		return -1;
	}
	return 0;
}

/* One "N" or "N-M" of a CPU list (@n bytes at @p) into *@mask. */
static int cpu_range(const char *p, size_t n, uint64_t *mask, char *why, size_t len)
{
	unsigned long lo, hi;
	char item[32], *end;

	snprintf(item, sizeof(item), "%.*s", (int)n, p);
	if (n == 0 || n >= sizeof(item) || !isdigit((unsigned char)item[0]))
		goto bad;
	lo = hi = strtoul(item, &end, 10);
	if (*end == '-') {
		if (!isdigit((unsigned char)end[1]))
			goto bad;
		hi = strtoul(end + 1, &end, 10);
	}
	if (*end)
		goto bad;
	if (hi >= CONFIG_MAX_CPUS) {
		snprintf(why, len, "CPU %lu: clockd serves CPUs 0 to %d", hi, CONFIG_MAX_CPUS - 1);
		return -1;
	}
	if (lo > hi) {
		snprintf(why, len, "'%s': a range goes upwards", item);
		return -1;
	}
	for (unsigned long c = lo; c <= hi; c++) {
		if (*mask & (1ull << c)) {
			snprintf(why, len, "CPU %lu is listed twice", c);
			return -1;
		}
		*mask |= 1ull << c;
	}
	return 0;
bad:
	snprintf(why, len, "'%s' is not a CPU number or range (N or N-M)", item);
	return -1;
}

int config_cpu_list(const char *v, uint64_t *mask, char *why, size_t len)
{
	const char *p = v;

	*mask = 0;
	if (strcmp(v, "all") == 0) {
		*mask = UINT64_MAX;
		return 0;
	}
	for (;;) {
		size_t n = strcspn(p, ",");

		if (cpu_range(p, n, mask, why, len) < 0)
			return -1;
		if (!p[n])
			return 0;
		p += n + 1;
	}
}

static int cpus_validate(const char *v, char *why, size_t len)
{
	uint64_t mask;

	return config_cpu_list(v, &mask, why, len);
}

/* Empty, or a user or group name (or a number), as getpwnam and getgrnam
 * take them; whether it exists is checked at start. */
static int name_validate(const char *v, char *why, size_t len)
{
	if (strspn(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") != strlen(v) ||
	    *v == '-') {
		snprintf(why, len, "'%s' is not a user or group name", v);
		return -1;
	}
	return 0;
}

/* The drop-in directory: empty (the main file's path + ".d"), "off", or
 * an absolute path. */
static int confdir_validate(const char *v, char *why, size_t len)
{
	if (strcmp(v, "off") == 0)
		return 0;
	if (*v && *v != '/') {
		snprintf(why, len, "'%s' is neither off nor an absolute path", v);
		return -1;
	}
	return 0;
}

static const char *const log_choices[] = { "none", "tracking", "reference", "timers", NULL };
static const char *const page_mode_choices[] = { "0644", "0640", NULL };
static const char *const watchdog_choices[] = { "auto", "off", NULL };
static const char *const log_level_choices[] = { "error", "warning", "notice", "info", "debug", NULL };

const struct config_key config_table[] = {
	{ "hz", CFG_UINT, "1000", CLOCKD_HZ_MIN, CLOCKD_HZ_MAX, NULL, FIELD(hz),
	  "ticks per second: jiffies_64 advances at this rate" },
	{ "jiffies_wrap_after", CFG_UINT, "300", 0, UINT32_MAX, NULL, FIELD(jiffies_wrap_after),
	  "seconds after the first start at which the 32-bit jiffies wrap (INITIAL_JIFFIES)" },
	{ "source", CFG_LIST, "auto", 0, 0, source_choices, FIELD(source),
	  "clocksources in order of preference (a fault moves to the next): auto (tsc, posix), "
	  "tsc, hpet, phc, posix, sim" },
	{ "posix_clock", CFG_CHOICE, "monotonic_raw", 0, 0, posix_clock_choices, FIELD(posix_clock),
	  "the kernel clock the posix source reads" },
	{ "tick", CFG_LIST, "timerfd", 0, 0, tick_choices, FIELD(tick),
	  "tick devices in order of preference (a fault moves to the next): timerfd, hpet, rtc, gpio, sim" },
	{ "page", CFG_PATH, "/run/clockd/page", 0, 0, NULL, FIELD(page),
	  "path of the shared time page (clients: $CLOCKD_SHM)" },
	{ "stale_after_ms", CFG_UINT, "100", 1, 3600000, NULL, FIELD(stale_after_ms),
	  "clockd_status() and clockctl call the page stale when not updated for this long (at least 3 ticks)" },
	{ "extrapolate_max_s", CFG_UINT, "10", 1, 3600, NULL, FIELD(extrapolate_max_s),
	  "fine reads extrapolate this long past the last update before they fail with ESTALE "
	  "(at most half the counter's wrap, at least stale_after_ms)" },
	{ "tsc_calibrate_ms", CFG_UINT, "100", 10, 10000, NULL, FIELD(tsc_calibrate_ms),
	  "first measurement of the TSC rate against CLOCK_MONOTONIC_RAW, in ms" },
	{ "log_level", CFG_CHOICE, "info", 0, 0, log_level_choices, FIELD(log_level),
	  "error, warning, notice, info or debug" },
	{ "stall_ticks", CFG_UINT, "10", 2, 1000000, NULL, FIELD(stall_ticks),
	  "a device with no tick, or a counter with no progress, for this many tick periods is stalled" },
	{ "tick_priority", CFG_UINT, "40", 0, 99, NULL, FIELD(tick_priority),
	  "SCHED_FIFO priority of the tick thread (0: SCHED_OTHER; not permitted: SCHED_OTHER, logged)" },
	{ "source_recover_s", CFG_UINT, "10", 0, 86400, NULL, FIELD(source_recover_s),
	  "a faulted source no other took over is taken back once it behaves for this long (0: never)" },
	{ "hpet_device", CFG_PATH, "/dev/hpet", 0, 0, NULL, FIELD(hpet_device),
	  "the HPET character device (source hpet, tick hpet)" },
	{ "rtc_device", CFG_PATH, "/dev/rtc0", 0, 0, NULL, FIELD(rtc_device),
	  "the RTC character device whose periodic interrupt is tick rtc" },
	{ "gpio_chip", CFG_STRING, "gpiochip0", 0, 0, NULL, FIELD(gpio_chip),
	  "GPIO chip of tick gpio: name (gpiochip0), number, path or label" },
	{ "gpio_line", CFG_STRING, "0", 0, 0, NULL, FIELD(gpio_line),
	  "GPIO line of tick gpio: offset on the chip or line name" },
	{ "gpio_edge", CFG_CHOICE, "rising", 0, 0, gpio_edge_choices, FIELD(gpio_edge),
	  "edges of the GPIO line that are ticks: rising, falling or both" },
	{ "gpio_debounce_us", CFG_UINT, "0", 0, 1000000, NULL, FIELD(gpio_debounce_us),
	  "ignore GPIO edges closer than this to the last accepted one, in us (0: off)" },
	{ "phc_device", CFG_PATH, "/dev/ptp0", 0, 0, NULL, FIELD(phc_device),
	  "the PTP hardware clock of source phc" },
	{ "sim_rate_ppm", CFG_INT, "0", 0, 0, NULL, FIELD(sim_rate_ppm),
	  "rate error of the simulated device, ppm (positive: fast)", -100000, 100000 },
	{ "sim_jitter_ns", CFG_UINT, "0", 0, 100000000, NULL, FIELD(sim_jitter_ns),
	  "pulse time jitter of the simulated device: uniform in +-this, ns" },
	{ "sim_seed", CFG_UINT, "1", 0, UINT64_MAX, NULL, FIELD(sim_seed),
	  "seed of the simulated device's jitter (same seed, same run)" },
	{ "sim_script", CFG_STRING, "", 0, 0, NULL, FIELD(sim_script),
	  "faults of the simulated device: \"AT ACTION [ARG]; ...\" (see clockd.conf(5))",
	  0, 0, simscript_validate },
	{ "reference", CFG_CHOICE, "system", 0, 0, reference_choices, FIELD(reference),
	  "what the clock is disciplined to: system (the kernel's clock), none (the device's own rate), "
	  "sim (simulated 1 PPS), gpio (a PPS line), phc, pps (a kernel PPS device)" },
	{ "pps_device", CFG_PATH, "/dev/pps0", 0, 0, NULL, FIELD(pps_device),
	  "the kernel PPS device of reference pps (RFC 2783; its edge: pps_edge)" },
	{ "pps_chip", CFG_STRING, "gpiochip0", 0, 0, NULL, FIELD(pps_chip),
	  "GPIO chip of reference gpio: name, number, path or label" },
	{ "pps_line", CFG_STRING, "1", 0, 0, NULL, FIELD(pps_line),
	  "GPIO line of reference gpio: offset on the chip or line name" },
	{ "pps_edge", CFG_CHOICE, "rising", 0, 0, pps_edge_choices, FIELD(pps_edge),
	  "the edge of the PPS line that marks the second: rising or falling" },
	{ "discipline_step_ms", CFG_UINT, "128", 0, 1000000, NULL, FIELD(discipline_step_ms),
	  "an offset to the reference above this at the start is stepped (realtime only), ms" },
	{ "discipline_restep_ms", CFG_UINT, "0", 0, 1000000, NULL, FIELD(discipline_restep_ms),
	  "after lock, step realtime when the offset exceeds this, ms (0: never, slew only)" },
	{ "discipline_max_ppm", CFG_UINT, "500", 1, 100000, NULL, FIELD(discipline_max_ppm),
	  "the largest rate correction the discipline applies, ppm" },
	{ "ntp_shm_unit", CFG_INT, "-1", 0, 0, NULL, FIELD(ntp_shm_unit),
	  "NTP SHM refclock segment unit (key 0x4e545030 + unit) to export to; -1: off", -1, 255 },
	{ "ntp_shm_mode", CFG_STRING, "0600", 0, 0, NULL, FIELD(ntp_shm_mode),
	  "permissions of the NTP SHM segment (octal); anyone who may write it may feed time",
	  0, 0, mode_validate },
	{ "chrony_sock", CFG_STRING, "", 0, 0, NULL, FIELD(chrony_sock),
	  "chronyd's SOCK refclock socket to send samples to (empty: off)", 0, 0, opt_path_validate },
	{ "control_socket", CFG_STRING, "", 0, 0, NULL, FIELD(control_socket),
	  "path of the control socket (empty: \"control\" beside the page; clients: $CLOCKD_SOCKET)",
	  0, 0, opt_path_validate },
	{ "timer_cpus", CFG_STRING, "all", 0, 0, NULL, FIELD(timer_cpus),
	  "CPUs that run a timer base: all (the daemon's affinity) or a list such as 0,2-3",
	  0, 0, cpus_validate },
	{ "timer_priority", CFG_UINT, "30", 0, 99, NULL, FIELD(timer_priority),
	  "SCHED_FIFO priority of the timer threads (0: SCHED_OTHER; not permitted: SCHED_OTHER, logged)" },
	{ "timer_lead_ns", CFG_UINT, "30000", 0, TIMERREC_LEAD_MAX_NS, NULL, FIELD(timer_lead_ns),
	  "ns timers of a real-time client are handed to it this early; it spins out the rest" },
	{ "timer_lead_other_ns", CFG_UINT, "30000", 0, TIMERREC_LEAD_MAX_NS, NULL, FIELD(timer_lead_other_ns),
	  "ns timers of a SCHED_OTHER client are handed to it this early; it sleeps out the rest" },
	{ "timer_ring_slots", CFG_UINT, "4096", 64, 65536, NULL, FIELD(timer_ring_slots),
	  "records in each client ring (submission and delivery, per CPU), a power of two",
	  0, 0, pow2_validate },
	{ "client_max_timers", CFG_UINT, "65536", 1, 16777216, NULL, FIELD(client_max_timers),
	  "timers one client may have (timer ids 0 to this - 1)" },
	{ "timer_min_period_us", CFG_UINT, "100", 1, 1000000, NULL, FIELD(timer_min_period_us),
	  "shortest period of a periodic ns timer, us: shorter ones run at this period" },
	{ "client_max_expiries_per_sec", CFG_UINT, "10000", 0, 10000000, NULL,
	  FIELD(client_max_expiries_per_sec),
	  "expiries (periodic or one-shot) one client gets per second on each CPU; the rest wait, "
	  "periods folded into overruns (0: no limit)" },
	{ "max_timers_per_user", CFG_UINT, "262144", 0, 1073741824, NULL, FIELD(max_timers_per_user),
	  "timers one user's clients may have armed together, counted when armed (beyond: EAGAIN; "
	  "0: no limit)" },
	{ "client_max_msgs_per_sec", CFG_UINT, "1000", 1, 1000000, NULL, FIELD(client_max_msgs_per_sec),
	  "control socket messages one client may send per second (burst the same)" },
	{ "max_clients", CFG_UINT, "64", 1, 4096, NULL, FIELD(max_clients),
	  "clients connected to the control socket at once" },
	{ "max_clients_per_user", CFG_UINT, "32", 1, 4096, NULL, FIELD(max_clients_per_user),
	  "of those, clients of one user (uid) at once: one user cannot keep the others out" },
	{ "user", CFG_STRING, "", 0, 0, NULL, FIELD(user),
	  "user to run as once devices, page and socket are open (empty: stay as started)",
	  0, 0, name_validate },
	{ "group", CFG_STRING, "", 0, 0, NULL, FIELD(group),
	  "group to run as with user (empty: the user's primary group)", 0, 0, name_validate },
	{ "page_mode", CFG_CHOICE, "0644", 0, 0, page_mode_choices, FIELD(page_mode),
	  "permissions of the time page: 0644 (everyone reads) or 0640 (page_group reads)" },
	{ "page_group", CFG_STRING, "", 0, 0, NULL, FIELD(page_group),
	  "group owning the time page (empty: the group the daemon runs as)", 0, 0, name_validate },
	{ "socket_group", CFG_STRING, "", 0, 0, NULL, FIELD(socket_group),
	  "group owning the control socket, mode 0660 (empty: the group the daemon runs as)",
	  0, 0, name_validate },
	{ "stats_group", CFG_STRING, "", 0, 0, NULL, FIELD(stats_group),
	  "group whose members see every timer client in CLIENT_STATS (others: their own uid's; "
	  "empty: root only)", 0, 0, name_validate },
	{ "watchdog", CFG_CHOICE, "auto", 0, 0, watchdog_choices, FIELD(watchdog),
	  "systemd watchdog: auto (WATCHDOG=1 while ticking, when $WATCHDOG_USEC asks) or off" },
	{ "logdir", CFG_STRING, "/var/log/clockd", 0, 0, NULL, FIELD(logdir),
	  "directory of the statistics logs (made at start if missing, owned by user)", 0, 0,
	  opt_path_validate },
	{ "log", CFG_LIST, "none", 0, 0, log_choices, FIELD(log_kinds),
	  "statistics logs written to logdir, a line per update: none, or tracking, reference, timers" },
	{ "confdir", CFG_STRING, "", 0, 0, NULL, FIELD(confdir),
	  "drop-in directory whose *.conf files are read after the main file, in lexical order "
	  "(empty: the main file's path with .d appended; off: none)", 0, 0, confdir_validate },
};
const size_t config_table_len = sizeof(config_table) / sizeof(config_table[0]);

const struct config_key *config_find(const char *name)
{
	for (size_t i = 0; i < config_table_len; i++)
		if (strcmp(config_table[i].name, name) == 0)
			return &config_table[i];
	return NULL;
}

static bool is_choice(const struct config_key *k, const char *w)
{
	for (const char *const *c = k->choices; *c; c++)
		if (strcmp(*c, w) == 0)
			return true;
	return false;
}

/* "why" for a word that is not a choice: lists the choices. */
static void not_a_choice(const struct config_key *k, const char *w, char *why, size_t len)
{
	size_t o = (size_t)snprintf(why, len, "'%s' is not one of:", w);

	for (const char *const *c = k->choices; *c && o < len; c++)
		o += (size_t)snprintf(why + o, len - o, " %s", *c);
}

bool config_list_item(const char *list, unsigned i, char *word, size_t len)
{
	const char *p = list;

	for (;;) {
		size_t n;

		p += strspn(p, ", \t");
		if (!*p)
			return false;
		n = strcspn(p, ", \t");
		if (i-- == 0) {
			snprintf(word, len, "%.*s", (int)n, p);
			return true;
		}
		p += n;
	}
}

/* A CFG_LIST value: known words, none twice, "auto" alone; stored as
 * "a,b,c". */
static int list_set(const struct config_key *k, char *field, const char *v, char *why, size_t len)
{
	char out[CONFIG_LIST_MAX * 32] = "", w[32];
	unsigned n = 0;

	while (config_list_item(v, n, w, sizeof(w))) {
		if (!is_choice(k, w)) {
			not_a_choice(k, w, why, len);
			return -1;
		}
		if (n == CONFIG_LIST_MAX) {
			snprintf(why, len, "more than %d entries", CONFIG_LIST_MAX);
			return -1;
		}
		for (unsigned j = 0; j < n; j++) {
			char prev[32];

			config_list_item(out, j, prev, sizeof(prev));
			if (strcmp(prev, w) == 0) {
				snprintf(why, len, "'%s' is listed twice", w);
				return -1;
			}
		}
		if (strcmp(w, "auto") == 0 && (n > 0 || config_list_item(v, 1, w, sizeof(w)))) {
			snprintf(why, len, "'auto' cannot be combined with other entries");
			return -1;
		}
		snprintf(out + strlen(out), sizeof(out) - strlen(out), "%s%s", n ? "," : "", w);
		n++;
	}
	if (n == 0) {
		snprintf(why, len, "empty list");
		return -1;
	}
	if (strlen(out) >= k->size) {
		snprintf(why, len, "list longer than %zu bytes", k->size - 1);
		return -1;
	}
	snprintf(field, k->size, "%s", out);
	return 0;
}

/*
 * The parsers, one per type (config_type indexes parsers[]): each parses
 * and checks the text @v of key @k and stores it at @field, or returns -1
 * with "why" (without the key).
 */
typedef int parse_fn(const struct config_key *k, char *field, const char *v, char *why, size_t len);

static int uint_set(const struct config_key *k, char *field, const char *v, char *why, size_t len)
{
	unsigned long long n;
	char *end;

	errno = 0;
	n = isdigit((unsigned char)*v) ? strtoull(v, &end, 10) : 0;
	if (!isdigit((unsigned char)*v) || *end) {
		snprintf(why, len, "'%s' is not a number", v);
		return -1;
	}
	if (errno == ERANGE || n < k->min || n > k->max) {
		snprintf(why, len, "%s is out of range %llu..%llu", v, (unsigned long long)k->min,
			 (unsigned long long)k->max);
		return -1;
	}
	if (k->validate && k->validate(v, why, len) < 0)
		return -1;
	if (k->size == sizeof(uint32_t))
		memcpy(field, &(uint32_t){ (uint32_t)n }, sizeof(uint32_t));
	else
		memcpy(field, &(uint64_t){ n }, sizeof(uint64_t));
	return 0;
}

static int int_set(const struct config_key *k, char *field, const char *v, char *why, size_t len)
{
	long long n;
	char *end;

	errno = 0;
	n = strtoll(v, &end, 10);
	if (end == v || *end || (!isdigit((unsigned char)*v) && *v != '-' && *v != '+')) {
		snprintf(why, len, "'%s' is not a number", v);
		return -1;
	}
	if (errno == ERANGE || n < k->smin || n > k->smax) {
		snprintf(why, len, "%s is out of range %lld..%lld", v, (long long)k->smin,
			 (long long)k->smax);
		return -1;
	}
	memcpy(field, &(int64_t){ n }, sizeof(int64_t));
	return 0;
}

static int choice_set(const struct config_key *k, char *field, const char *v, char *why, size_t len)
{
	if (!is_choice(k, v)) {
		not_a_choice(k, v, why, len);
		return -1;
	}
	snprintf(field, k->size, "%s", v);
	return 0;
}

static int string_set(const struct config_key *k, char *field, const char *v, char *why, size_t len)
{
	for (const char *c = v; *c; c++) {
		if (*c == '"' || iscntrl((unsigned char)*c)) {
			snprintf(why, len, "'%s' contains a double quote or a control character", v);
			return -1;
		}
	}
	if (strlen(v) >= k->size) {
		snprintf(why, len, "longer than %zu bytes", k->size - 1);
		return -1;
	}
	if (k->validate && k->validate(v, why, len) < 0)
		return -1;
	snprintf(field, k->size, "%s", v);
	return 0;
}

static int path_set(const struct config_key *k, char *field, const char *v, char *why, size_t len)
{
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

static parse_fn *const parsers[] = {
	[CFG_UINT] = uint_set,     [CFG_CHOICE] = choice_set, [CFG_PATH] = path_set,
	[CFG_LIST] = list_set,     [CFG_INT] = int_set,       [CFG_STRING] = string_set,
};

/* Parse and store one value. 0, or -1 with "why" (without the key). */
static int key_set(const struct config_key *k, struct clockd_config *cfg, const char *v,
		   char *why, size_t len)
{
	if ((size_t)k->type >= sizeof(parsers) / sizeof(parsers[0]) || !parsers[k->type]) {
		snprintf(why, len, "internal error: bad key type");
		return -1;
	}
	return parsers[k->type](k, (char *)cfg + k->offset, v, why, len);
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

/*
 * One load in progress, over one or more files (a file and what it
 * includes, or a drop-in directory): where errors go and how many so far,
 * every file read (for the messages), and the file and line that last set
 * each key (line 0: not set), which the checks between keys cite.
 */
struct load {
	FILE *errs;
	int errors;
	bool dropins; /* reading a drop-in directory */
	char **files;
	size_t nfiles;
	bool too_many; /* CONFIG_MAX_FILES read, and said */
	/* The files being read, the caller's first: one that includes
	 * itself, however far down, is an error, not a loop. */
	dev_t open_dev[CONFIG_INCLUDE_DEPTH + 1];
	ino_t open_ino[CONFIG_INCLUDE_DEPTH + 1];
	size_t set_file[sizeof(config_table) / sizeof(config_table[0])];
	unsigned set_line[sizeof(config_table) / sizeof(config_table[0])];
};

/* One file being read: its line count and the line that set each key in
 * this file (a key may appear once per file; a later file overrides). */
struct load_file {
	struct load *ld;
	size_t file; /* index in ld->files */
	unsigned lineno;
	unsigned depth; /* 0: the file the caller named */
	unsigned seen[sizeof(config_table) / sizeof(config_table[0])];
};

/* One error, "PATH:LINE: [KEY: ]why" (no LINE when @line is 0); the
 * first CONFIG_ERRORS_SHOWN only, and the one that ends the load early
 * (@last). */
#define CONFIG_ERRORS_SHOWN 50

/* The load reads nothing more: it has read CONFIG_MAX_FILES, or has
 * failed with more errors than it shows (an include of binaries, say:
 * what is left would change neither). */
static bool load_over(const struct load *ld)
{
	return ld->too_many || ld->errors > CONFIG_ERRORS_SHOWN;
}

static void load_error_at(struct load *ld, const char *path, unsigned line, const char *key, const char *why,
			  bool last)
{
	if ((++ld->errors > CONFIG_ERRORS_SHOWN && !last) || !ld->errs) {
		if (ld->errs && ld->errors == CONFIG_ERRORS_SHOWN + 1)
			fprintf(ld->errs, "%s: further errors not shown\n", path);
		return;
	}
	fprintf(ld->errs, "%s:", path);
	if (line)
		fprintf(ld->errs, "%u:", line);
	fprintf(ld->errs, " %s%s%s\n", key ? key : "", key ? ": " : "", why);
}

static void load_error(struct load *ld, const char *path, unsigned line, const char *key, const char *why)
{
	load_error_at(ld, path, line, key, why, false);
}

static void file_error(struct load_file *lf, const char *key, const char *why)
{
	load_error(lf->ld, lf->ld->files[lf->file], lf->lineno, key, why);
}

/*
 * The next line of @f into @line (@size bytes, NUL-terminated, without its
 * newline), read whole even when it does not fit (but not past
 * CONFIG_MAX_BYTES, where the caller stops): 1, 0 at the end of the
 * file, -1 with why for a line that cannot be used. A line with a NUL byte
 * is refused as such and the count of lines stays right (fgets would have
 * hidden the rest of the line, and its newline, behind the NUL). The
 * bytes read are added to *@bytes.
 */
static int read_line(FILE *f, char *line, size_t size, char *why, size_t len, size_t *bytes)
{
	size_t n = 0;
	bool nul = false;
	int ch = EOF;

	while (n <= CONFIG_MAX_BYTES && (ch = getc(f)) != EOF && ch != '\n') {
		nul |= ch == '\0';
		if (n < size - 1)
			line[n] = (char)ch;
		n++;
	}
	*bytes += n + (ch == '\n');
	if (ch == EOF && n == 0)
		return 0;
	line[n < size - 1 ? n : size - 1] = '\0';
	if (nul)
		snprintf(why, len, "contains a NUL byte");
	else if (n > size - 2)
		snprintf(why, len, "line longer than %zu bytes", size - 2);
	return nul || n > size - 2 ? -1 : 1;
}

static void load_path(struct load *ld, struct clockd_config *next, const char *path, unsigned depth,
		      const char *from, unsigned from_line);

/*
 * "include PATTERN": the files it names, at this point of the file. A
 * relative path is taken from the including file's directory; a pattern
 * with *, ? or [ may match nothing (glob(3), in its sorted order); a plain
 * path must exist.
 */
static void load_include(struct load_file *lf, struct clockd_config *next, char *arg)
{
	char pattern[CONFIG_PATH_MAX], why[CONFIG_PATH_MAX + 64];
	const char *cur = lf->ld->files[lf->file], *slash = strrchr(cur, '/');
	glob_t g;
	int r;

	arg = trim(arg);
	if (*arg == '"') {
		char *q = strchr(arg + 1, '"');

		if (!q || (*trim(q + 1) && *trim(q + 1) != '#')) {
			file_error(lf, "include", q ? "text after the quoted path" : "unterminated quoted path");
			return;
		}
		*q = '\0';
		arg++;
	} else {
		arg[strcspn(arg, "#")] = '\0';
		arg = trim(arg);
	}
	if (*arg == '=') {
		file_error(lf, "include", "a directive, not a key: include FILE");
		return;
	}
	if (!*arg) {
		file_error(lf, "include", "no file named");
		return;
	}
	if (*arg == '/' || !slash)
		r = snprintf(pattern, sizeof(pattern), "%s", arg);
	else
		r = snprintf(pattern, sizeof(pattern), "%.*s/%s", (int)(slash - cur), cur, arg);
	if (r < 0 || (size_t)r >= sizeof(pattern)) {
		file_error(lf, "include", "path too long");
		return;
	}
	if (lf->depth + 1 > CONFIG_INCLUDE_DEPTH) {
		snprintf(why, sizeof(why), "%s: includes nested deeper than %d (does a file include itself?)",
			 pattern, CONFIG_INCLUDE_DEPTH);
		file_error(lf, "include", why);
		return;
	}
	if (!strpbrk(pattern, "*?[")) {
		load_path(lf->ld, next, pattern, lf->depth + 1, cur, lf->lineno);
		return;
	}
	r = glob(pattern, GLOB_ERR, NULL, &g);
	if (r != 0 && r != GLOB_NOMATCH) {
		snprintf(why, sizeof(why), "%s: %s", pattern, r == GLOB_NOSPACE ? "out of memory" : "cannot read a directory");
		file_error(lf, "include", why);
	} else {
		for (size_t i = 0; r == 0 && i < g.gl_pathc && !load_over(lf->ld); i++)
			load_path(lf->ld, next, g.gl_pathv[i], lf->depth + 1, cur, lf->lineno);
	}
	if (r != GLOB_NOMATCH)
		globfree(&g);
}

/* "include" followed by a blank: the directive, not a key. */
static char *include_arg(char *line)
{
	line += strspn(line, " \t");
	if (strncmp(line, "include", 7) != 0 || (line[7] != ' ' && line[7] != '\t'))
		return NULL;
	return line + 7;
}

/* One line of the file, applied to @next. */
static void load_line(struct load_file *lf, struct clockd_config *next, char *line)
{
	const struct config_key *k;
	char *key, *val, *inc, why[256];
	size_t i;

	inc = include_arg(line);
	if (inc) {
		load_include(lf, next, inc);
		return;
	}
	if (split_line(line, &key, &val, why, sizeof(why)) < 0) {
		file_error(lf, key, why);
		return;
	}
	if (!key)
		return;
	k = config_find(key);
	if (!k) {
		file_error(lf, key, "unknown key");
		return;
	}
	i = (size_t)(k - config_table);
	if (lf->seen[i]) {
		file_error(lf, key, "set more than once");
		return;
	}
	lf->seen[i] = lf->lineno;
	if (key_set(k, next, val, why, sizeof(why)) < 0) {
		file_error(lf, key, why);
		return;
	}
	lf->ld->set_file[i] = lf->file;
	lf->ld->set_line[i] = lf->lineno;
}

/* @st is one of the files being read, at depths 0 to @depth - 1. */
static bool open_already(const struct load *ld, unsigned depth, const struct stat *st)
{
	for (unsigned i = 0; i < depth && i <= CONFIG_INCLUDE_DEPTH; i++)
		if (ld->open_dev[i] == st->st_dev && ld->open_ino[i] == st->st_ino)
			return true;
	return false;
}

/* Read @path (included from @from:@from_line, or named by the caller
 * when @from is NULL) into @next. */
static void load_path(struct load *ld, struct clockd_config *next, const char *path, unsigned depth,
		      const char *from, unsigned from_line)
{
	struct load_file lf = { .ld = ld, .depth = depth };
	char line[1024], why[CONFIG_PATH_MAX + 64], **files;
	size_t bytes = 0;
	struct stat st;
	FILE *f;
	int fd, r;

	if (load_over(ld))
		return;
	/* Includes of includes (a pattern matching the file itself and its
	 * siblings) could name files without end: a bound. */
	if (ld->nfiles >= CONFIG_MAX_FILES) {
		if (!ld->too_many) {
			ld->too_many = true;
			snprintf(why, sizeof(why), "%s: more than %d files to read (do includes include each other?)",
				 path, CONFIG_MAX_FILES);
			load_error_at(ld, from ? from : path, from_line, from ? "include" : NULL, why, true);
		}
		return;
	}
	files = realloc(ld->files, (ld->nfiles + 1) * sizeof(*files));
	if (files)
		ld->files = files;
	if (!files || !(files[ld->nfiles] = strdup(path))) {
		load_error(ld, path, 0, NULL, "out of memory");
		return;
	}
	lf.file = ld->nfiles++;
	/* Includes and drop-ins open without blocking: a FIFO is refused
	 * below, not waited on. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | (from || ld->dropins ? O_NONBLOCK : 0));
	f = fd < 0 ? NULL : fdopen(fd, "r");
	if (!f && fd >= 0)
		close(fd);
	if (!f)
		snprintf(why, sizeof(why), "cannot open: %s", strerror(errno));
	else if (fstat(fileno(f), &st) < 0)
		snprintf(why, sizeof(why), "cannot stat: %s", strerror(errno));
	else if (!S_ISREG(st.st_mode) && (from || ld->dropins))
		/* An include or a drop-in is a file: not a FIFO that would
		 * block, nor a device. The file named by the caller may be
		 * anything it reads (/dev/null: no file, the defaults). */
		snprintf(why, sizeof(why), "not a regular file");
	else if (from && open_already(ld, depth, &st))
		snprintf(why, sizeof(why), "includes itself (it is being read)");
	else if (S_ISREG(st.st_mode) && st.st_size > CONFIG_MAX_BYTES)
		snprintf(why, sizeof(why), "%lld bytes, more than %d: not a configuration file", (long long)st.st_size,
			 CONFIG_MAX_BYTES);
	else
		why[0] = '\0';
	if (why[0]) {
		if (from) {
			char msg[sizeof(why) + CONFIG_PATH_MAX];

			snprintf(msg, sizeof(msg), "%s: %s", path, why);
			load_error(ld, from, from_line, "include", msg);
		} else {
			load_error(ld, path, 0, NULL, why);
		}
		if (f)
			fclose(f);
		return;
	}
	ld->open_dev[depth] = st.st_dev;
	ld->open_ino[depth] = st.st_ino;
	while (!load_over(ld) && (r = read_line(f, line, sizeof(line), why, sizeof(why), &bytes)) != 0) {
		lf.lineno++;
		/* A file whose size says nothing (/proc) is bounded too. */
		if (bytes > CONFIG_MAX_BYTES) {
			snprintf(why, sizeof(why), "more than %d bytes: not a configuration file", CONFIG_MAX_BYTES);
			file_error(&lf, NULL, why);
			break;
		}
		if (r < 0)
			file_error(&lf, NULL, why);
		else
			load_line(&lf, next, line);
	}
	if (ferror(f)) {
		snprintf(why, sizeof(why), "read error: %s", strerror(errno));
		load_error(ld, path, 0, NULL, why);
	}
	fclose(f);
}

/* The checks between keys; they are between hz and jiffies_wrap_after:
 * cite the file and line of whichever of them was set last. */
static void load_check(struct load *ld, const struct clockd_config *next)
{
	size_t a = (size_t)(config_find("hz") - config_table);
	size_t b = (size_t)(config_find("jiffies_wrap_after") - config_table);
	size_t last = ld->set_file[a] > ld->set_file[b] ||
		      (ld->set_file[a] == ld->set_file[b] && ld->set_line[a] > ld->set_line[b]) ? a : b;
	char why[256];

	if (config_check(next, why, sizeof(why)) < 0)
		load_error(ld, ld->set_line[last] ? ld->files[ld->set_file[last]] : ld->files[0],
			   ld->set_line[last], NULL, why);
}

/* The end of a load: checks, then all or nothing. */
static int load_finish(struct load *ld, struct clockd_config *cfg, const struct clockd_config *next)
{
	if (!ld->errors && ld->nfiles)
		load_check(ld, next);
	for (size_t i = 0; i < ld->nfiles; i++)
		free(ld->files[i]);
	free(ld->files);
	if (ld->errors)
		return -1;
	*cfg = *next;
	return 0;
}

int config_load(struct clockd_config *cfg, const char *path, FILE *errs)
{
	struct clockd_config next = *cfg;
	struct load ld = { .errs = errs };

	load_path(&ld, &next, path, 0, NULL, 0);
	return load_finish(&ld, cfg, &next);
}

/* Drop-in names: "*.conf", not hidden. */
static int dropin_filter(const struct dirent *d)
{
	size_t n = strlen(d->d_name);

	return d->d_name[0] != '.' && n > 5 && strcmp(d->d_name + n - 5, ".conf") == 0;
}

/* Lexical order, whatever the locale (alphasort uses strcoll). */
static int dropin_compare(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

int config_load_dir(struct clockd_config *cfg, const char *dir, FILE *errs)
{
	struct clockd_config next = *cfg;
	struct load ld = { .errs = errs, .dropins = true };
	struct dirent **names = NULL;
	char path[CONFIG_PATH_MAX], why[256];
	int n = scandir(dir, &names, dropin_filter, dropin_compare);

	if (n < 0) {
		if (errno == ENOENT)
			return 0;
		snprintf(why, sizeof(why), "cannot read the drop-in directory: %s", strerror(errno));
		load_error(&ld, dir, 0, NULL, why);
		return -1;
	}
	for (int i = 0; i < n; i++) {
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name) >= sizeof(path))
			load_error(&ld, dir, 0, names[i]->d_name, "path too long");
		else
			load_path(&ld, &next, path, 0, NULL, 0);
		free(names[i]);
	}
	free(names);
	if (strcmp(next.confdir, cfg->confdir) != 0) {
		size_t i = (size_t)(config_find("confdir") - config_table);

		load_error(&ld, ld.files[ld.set_file[i]], ld.set_line[i], "confdir",
			   "set in a drop-in file, where it has no effect: set it in the main file");
	}
	if (load_finish(&ld, cfg, &next) < 0)
		return -1;
	return n;
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
		} else if (k->type == CFG_INT) {
			int64_t n;

			memcpy(&n, field, sizeof(n));
			fprintf(out, "%s = %lld\n", k->name, (long long)n);
		} else if (k->type == CFG_PATH || k->type == CFG_STRING) {
			fprintf(out, "%s = \"%s\"\n", k->name, field);
		} else {
			fprintf(out, "%s = %s\n", k->name, field);
		}
	}
}
