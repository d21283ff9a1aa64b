/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <clockd/page.h>

#include "clockd/pagefile.h"
#include "clockd/statlog.h"
#include "clockd/timers/timerbase.h"
#include "shared/latch.h"
#include "shared/log.h"
#include "shared/tickmath.h"

static const char *const kind_names[STATLOG_KINDS] = { "tracking", "reference", "timers" };

static const char *const headers[STATLOG_KINDS] = {
	"# Date (UTC) Time          State     Offset_ns   RMS_ns      Freq_ppb    Skew_ppb    Bound_ns",
	"# Date (UTC) Time          Event_mono_ns        Interval_ns  Offset_ns",
	"# Date (UTC) Time          CPU Clients Pend_jif Pend_ns  Expiries Overruns Late50_ns Late99_ns LateMax_ns",
};

static const char *const state_names[] = { "none", "unlocked", "acquiring", "locked", "holdover" };

int statlog_parse(const char *v, bool kind[STATLOG_KINDS], char *why, size_t len)
{
	const char *p = v;

	memset(kind, 0, sizeof(bool) * STATLOG_KINDS);
	for (;;) {
		size_t n;
		int k;

		p += strspn(p, ", \t");
		if (!*p)
			return 0;
		n = strcspn(p, ", \t");
		if (n == 4 && strncmp(p, "none", 4) == 0) {
			p += n;
			continue;
		}
		for (k = 0; k < STATLOG_KINDS; k++)
			if (strlen(kind_names[k]) == n && strncmp(p, kind_names[k], n) == 0)
				break;
		if (k == STATLOG_KINDS) {
			snprintf(why, len, "'%.*s' is not one of: none tracking reference timers", (int)n, p);
			return -1;
		}
		if (kind[k]) {
			snprintf(why, len, "'%s' is listed twice", kind_names[k]);
			return -1;
		}
		kind[k] = true;
		p += n;
	}
}

static void open_kind(struct statlog *sl, int k)
{
	char path[320];
	int fd;

	snprintf(path, sizeof(path), "%s/%s.log", sl->p.dir, kind_names[k]);
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0644);
	sl->f[k] = fd < 0 ? NULL : fdopen(fd, "a");
	if (!sl->f[k]) {
		log_warn("log %s: cannot open %s; that log is off", kind_names[k], path);
		if (fd >= 0)
			close(fd);
		return;
	}
	/* Line-buffered: a line is whole in the file as soon as written,
	 * for tail -f and for a reader that plots while we run. */
	setvbuf(sl->f[k], NULL, _IOLBF, 0);
	sl->lines[k] = 0;
}

void statlog_open(struct statlog *sl, const struct statlog_params *p, uid_t uid, gid_t gid)
{
	bool any = false;

	memset(sl, 0, sizeof(*sl));
	sl->p = *p;
	for (int k = 0; k < STATLOG_KINDS; k++)
		any |= p->kind[k];
	if (!any || !p->dir[0])
		return;
	if (mkdir(p->dir, 0755) == 0) {
		if (geteuid() == 0 && chown(p->dir, uid, gid) < 0)
			log_warn("logdir %s: cannot give it to uid %lu", p->dir, (unsigned long)uid);
	} else if (errno != EEXIST) {
		log_warn("logdir %s: cannot create it; statistics logs are off", p->dir);
		return;
	}
	for (int k = 0; k < STATLOG_KINDS; k++)
		if (p->kind[k])
			open_kind(sl, k);
}

void statlog_reopen(struct statlog *sl)
{
	for (int k = 0; k < STATLOG_KINDS; k++) {
		if (!sl->p.kind[k])
			continue;
		if (sl->f[k])
			fclose(sl->f[k]);
		sl->f[k] = NULL;
		open_kind(sl, k);
	}
}

void statlog_close(struct statlog *sl)
{
	for (int k = 0; k < STATLOG_KINDS; k++) {
		if (sl->f[k])
			fclose(sl->f[k]);
		sl->f[k] = NULL;
	}
}

/* Start a line of @k: the header when due, then the time stamp. */
static FILE *line_begin(struct statlog *sl, int k)
{
	struct timespec ts;
	struct tm tm;
	char date[32];
	FILE *f = sl->f[k];

	if (sl->lines[k]++ % STATLOG_BANNER == 0)
		fprintf(f, "%s\n", headers[k]);
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(date, sizeof(date), "%Y-%m-%d %H:%M:%S", &tm);
	fprintf(f, "%s.%06ld ", date, ts.tv_nsec / 1000);
	return f;
}

static void page_data(const struct pagefile *pf, struct clockd_page_data *d)
{
	const struct clockd_page_data *src;
	const void *tag;
	uint32_t seq;

	do {
		src = pagefile_read_begin(pf, &seq, &tag);
		latch_load_data(d, src);
	} while (pagefile_read_retry(pf, seq));
}

static void log_event(struct statlog *sl, const struct clockd_page_data *d)
{
	int64_t prev = sl->last_event_ns;

	sl->last_event_ns = d->ref_mono_ns;
	if (sl->f[STATLOG_TRACKING]) {
		FILE *f = line_begin(sl, STATLOG_TRACKING);

		fprintf(f, "%-9s %-11lld %-11lld %-11lld %-11lld %llu\n",
			d->disc_state < sizeof(state_names) / sizeof(state_names[0]) ? state_names[d->disc_state]
										   : "unknown",
			(long long)d->offset_ns, (long long)d->rms_offset_ns, (long long)d->freq_ppb,
			(long long)d->skew_ppb, (unsigned long long)d->error_bound_ns);
	}
	if (sl->f[STATLOG_REFERENCE]) {
		FILE *f = line_begin(sl, STATLOG_REFERENCE);

		fprintf(f, "%-20lld %-12lld %lld\n", (long long)d->ref_mono_ns,
			prev ? (long long)(d->ref_mono_ns - prev) : -1LL, (long long)d->offset_ns);
	}
}

static void log_timers(struct statlog *sl, struct timer_bases *tb)
{
	struct tb_cpu_stats s;
	FILE *f;

	for (unsigned k = 0; k < STATLOG_MAX_CPUS && timer_bases_cpu_stats(tb, k, &s) == 0; k++) {
		uint64_t fired = s.fired - (sl->have_prev ? sl->fired[k] : s.fired);
		uint64_t over = s.overruns - (sl->have_prev ? sl->overruns[k] : s.overruns);

		sl->fired[k] = s.fired;
		sl->overruns[k] = s.overruns;
		f = line_begin(sl, STATLOG_TIMERS);
		fprintf(f, "%-3u %-7u %-8llu %-8llu %-8llu %-8llu %-9llu %-9llu %llu\n", (unsigned)s.cpu,
			(unsigned)s.clients, (unsigned long long)s.pending_jiffies, (unsigned long long)s.pending_ns,
			(unsigned long long)fired, (unsigned long long)over, (unsigned long long)s.late_p50_ns,
			(unsigned long long)s.late_p99_ns, (unsigned long long)s.late_max_ns);
	}
	sl->have_prev = true;
}

void statlog_poll(struct statlog *sl, const struct pagefile *pf, struct timer_bases *tb)
{
	int64_t now = kclock_ns(CLOCK_MONOTONIC);

	if (sl->f[STATLOG_TRACKING] || sl->f[STATLOG_REFERENCE]) {
		struct clockd_page_data d;

		page_data(pf, &d);
		if (d.ref_mono_ns && d.ref_mono_ns != sl->last_event_ns)
			log_event(sl, &d);
	}
	if (sl->f[STATLOG_TIMERS] && tb && now >= sl->timers_next_ns) {
		/* Every second, on the second of the daemon's first line. */
		sl->timers_next_ns = sl->timers_next_ns ? sl->timers_next_ns + 1000000000 : now + 1000000000;
		if (sl->timers_next_ns <= now)
			sl->timers_next_ns = now + 1000000000;
		log_timers(sl, tb);
	}
}
