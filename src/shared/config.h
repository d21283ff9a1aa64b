/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * clockd.conf: one table (config_table[]) is the single source of truth for
 * every key's name, type, default, range and one-line description. Parsing,
 * validation, `clockd --check-config`, `clockd --help-config` and the
 * documentation test all read it.
 *
 * Syntax: "key = value" lines; '#' starts a comment (whole line or after
 * the value); blank lines ignored; values may be quoted with "..." (no
 * escapes). A key may appear once per file. Errors read "FILE:LINE: KEY: why".
 *
 * "include FILE" (a line of its own) reads FILE at that point: a relative
 * path is taken from the including file's directory, and a glob pattern
 * (*, ?, [) may match nothing (its matches are read in sorted order). A
 * key set again in a file read later overrides the earlier value. The
 * daemon then reads the drop-in directory (confdir): its "*.conf" files in
 * lexical order, after the main file.
 */
#ifndef CLOCKD_SHARED_CONFIG_H
#define CLOCKD_SHARED_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define CONFIG_DEFAULT_PATH SYSCONFDIR "/clockd.conf"

enum config_type {
	CFG_UINT,   /* unsigned integer in [min, max] */
	CFG_CHOICE, /* one word of choices[] */
	CFG_PATH,   /* absolute path, shorter than the field */
	CFG_LIST,   /* one to CONFIG_LIST_MAX words of choices[], in order of
		     * preference, separated by commas or blanks; stored
		     * "a,b"; a choice "auto" stands alone */
	CFG_INT,    /* signed integer in [smin, smax] */
	CFG_STRING, /* free text (no double quote or control character),
		     * shorter than the field; may be empty */
};

#define CONFIG_LIST_MAX 4
#define CONFIG_PATH_MAX 4096     /* a file named by include or in confdir */
#define CONFIG_INCLUDE_DEPTH 8   /* includes within includes */
#define CONFIG_MAX_FILES 256     /* files read by one load, drop-ins included */
#define CONFIG_MAX_BYTES 1048576 /* the longest file a load reads */

struct clockd_config {
	uint32_t hz;                 /* hz */
	uint64_t jiffies_wrap_after; /* jiffies_wrap_after, seconds */
	char source[32];             /* source */
	char posix_clock[32];        /* posix_clock */
	char tick[32];               /* tick */
	char page[256];              /* page */
	uint32_t stale_after_ms;     /* stale_after_ms */
	uint32_t extrapolate_max_s;  /* extrapolate_max_s */
	uint32_t tsc_calibrate_ms;   /* tsc_calibrate_ms */
	char log_level[16];          /* log_level */
	uint32_t stall_ticks;        /* stall_ticks */
	uint32_t tick_priority;      /* tick_priority */
	uint32_t source_recover_s;   /* source_recover_s */
	char hpet_device[64];        /* hpet_device */
	char rtc_device[64];         /* rtc_device */
	char gpio_chip[64];          /* gpio_chip */
	char gpio_line[64];          /* gpio_line */
	char gpio_edge[16];          /* gpio_edge */
	uint32_t gpio_debounce_us;   /* gpio_debounce_us */
	char phc_device[64];         /* phc_device */
	int64_t sim_rate_ppm;        /* sim_rate_ppm */
	uint64_t sim_jitter_ns;      /* sim_jitter_ns */
	uint64_t sim_seed;           /* sim_seed */
	char sim_script[512];        /* sim_script */
	char reference[16];          /* reference */
	char pps_chip[64];           /* pps_chip */
	char pps_line[64];           /* pps_line */
	char pps_edge[16];           /* pps_edge */
	char pps_device[64];         /* pps_device: reference pps */
	uint32_t discipline_step_ms; /* discipline_step_ms */
	uint32_t discipline_restep_ms; /* discipline_restep_ms */
	uint32_t discipline_max_ppm; /* discipline_max_ppm */
	int64_t ntp_shm_unit;        /* ntp_shm_unit */
	char ntp_shm_mode[8];        /* ntp_shm_mode */
	char chrony_sock[108];       /* chrony_sock */
	char control_socket[108];    /* control_socket (sun_path's size) */
	char timer_cpus[128];        /* timer_cpus: "all" or a CPU list */
	uint32_t timer_priority;     /* timer_priority */
	uint32_t timer_lead_ns;      /* timer_lead_ns */
	uint32_t timer_lead_other_ns; /* timer_lead_other_ns */
	uint32_t timer_ring_slots;   /* timer_ring_slots */
	uint32_t client_max_timers;  /* client_max_timers */
	uint32_t client_max_msgs_per_sec; /* client_max_msgs_per_sec */
	uint32_t max_clients;        /* max_clients */
	uint32_t max_clients_per_user; /* max_clients_per_user */
	char user[64];               /* user: run as after set-up ("": as started) */
	char group[64];              /* group ("": the user's) */
	char page_mode[8];           /* page_mode: 0644 or 0640 */
	char page_group[64];         /* page_group ("": the daemon's group) */
	char socket_group[64];       /* socket_group ("": the daemon's group) */
	uint32_t timer_min_period_us;     /* timer_min_period_us */
	uint32_t client_max_expiries_per_sec; /* client_max_expiries_per_sec */
	uint32_t max_timers_per_user;     /* max_timers_per_user */
	char stats_group[64];        /* stats_group ("": root only sees every client) */
	char watchdog[8];            /* watchdog: auto or off */
	char logdir[256];            /* logdir: statistics logs ("": none) */
	char log_kinds[32];          /* log: none, or tracking,reference,timers */
	char confdir[256];           /* confdir: "" (the main file + ".d"), off, or a path */
};

struct config_key {
	const char *name;
	enum config_type type;
	const char *def;            /* default, as it would be written */
	uint64_t min, max;          /* CFG_UINT */
	const char *const *choices; /* CFG_CHOICE, CFG_LIST: NULL-terminated */
	size_t offset, size;        /* where in struct clockd_config */
	const char *doc;            /* one line */
	int64_t smin, smax;         /* CFG_INT */
	/* Optional further check of a value (CFG_STRING, CFG_UINT), run on
	 * the text once the type's own checks passed, before it is stored:
	 * 0, or -1 with why. */
	int (*validate)(const char *value, char *why, size_t whylen);
};

/* The i-th word (from 0) of a CFG_LIST value into @word; false past the
 * end. */
bool config_list_item(const char *list, unsigned i, char *word, size_t len);

extern const struct config_key config_table[];
extern const size_t config_table_len;

/* Fill @cfg with every key's default (the embedded default config). */
void config_defaults(struct clockd_config *cfg);

/*
 * Parse @path over a copy of @cfg; on success store the result in @cfg and
 * return 0. On any error return -1, leave @cfg untouched (all or nothing),
 * and write one "FILE:LINE: KEY: why" line per error to @errs (if not NULL).
 * A missing file is an error ("FILE: cannot open: ...").
 */
int config_load(struct clockd_config *cfg, const char *path, FILE *errs);

/*
 * The drop-in directory @dir: its "*.conf" files (not hidden ones) in
 * lexical (strcmp) order, each as config_load reads a file, over a copy
 * of @cfg, all or nothing. Returns how many files were applied (0 when
 * @dir does not exist), or -1 after writing the errors to @errs.
 */
int config_load_dir(struct clockd_config *cfg, const char *dir, FILE *errs);

/* Set one key from text (command line overrides). Returns 0, or -1 with a
 * reason ("KEY: why") in @why. */
int config_set(struct clockd_config *cfg, const char *key, const char *value, char *why, size_t whylen);

/* Checks between keys (e.g. hz * jiffies_wrap_after < 2^32). 0 or -1 with
 * @why. config_load runs it too. */
int config_check(const struct clockd_config *cfg, char *why, size_t whylen);

/* Write every key as "key = value" (a valid config file). */
void config_write(FILE *out, const struct clockd_config *cfg);

const struct config_key *config_find(const char *name);

/* The highest CPU number a CPU list may name, plus one (the timer bases'
 * limit, TIMER_SHM_MAX_CPUS). */
#define CONFIG_MAX_CPUS 64

/*
 * Parse a timer_cpus value: "all" (every CPU: all bits set) or a list of
 * CPU numbers and ranges, "0,2-3". Returns 0 with the CPUs as bits of
 * *@mask, or -1 with why (a number above CONFIG_MAX_CPUS - 1, a reversed
 * range, a CPU listed twice, bad syntax).
 */
int config_cpu_list(const char *value, uint64_t *mask, char *why, size_t whylen);

#endif
