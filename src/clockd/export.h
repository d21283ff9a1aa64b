/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Export of clockd's time to the NTP daemons a fleet already runs: an NTP
 * SHM refclock segment (the ntpd type-28 layout that chrony's "refclock
 * SHM" reads) and chrony's SOCK refclock protocol. Each sample pairs
 * clockd's CLOCKD_REALTIME with the kernel's CLOCK_REALTIME at the same
 * instant; chronyd then steers the system clock to clockd (or just
 * watches it).
 *
 * Called from the tick thread only: one sample per reference event, or
 * once a second without a reference.
 */
#ifndef CLOCKD_EXPORT_H
#define CLOCKD_EXPORT_H

#include <stdbool.h>
#include <stdint.h>


/* What the export takes from the configuration. */
struct export_params {
	uint32_t hz;             /* the precision the samples claim */
	int64_t ntp_shm_unit;    /* NTP SHM unit; -1: none */
	unsigned ntp_shm_mode;   /* its permissions */
	const char *chrony_sock; /* chronyd's SOCK refclock path; "": none */
};

struct exporter {
	int shm_id;        /* -1: no SHM export */
	void *shm;         /* the attached segment */
	int sock_fd;       /* -1: no SOCK export */
	char sock_path[108];
	uint64_t samples, send_errors;
	void *priv;
};

/* Set up what @p asks for. 0, or -1 after logging why (the daemon
 * refuses to start). */
int export_open(struct exporter *ex, const struct export_params *p);
/* One sample: @clockd_ns is CLOCKD_REALTIME and @system_ns the kernel's
 * CLOCK_REALTIME at the same instant, ns since the epoch; @valid false
 * marks the sample unusable (leap "not in sync"); @leap is the page's
 * CLOCKD_LEAP_* word, carried as the samples' leap indicator (a leap second
 * announced for the end of the UTC day). Errors are logged once per state
 * change, never fatal. */
void export_sample(struct exporter *ex, int64_t clockd_ns, int64_t system_ns, bool valid, uint32_t leap);
void export_close(struct exporter *ex);

#endif
