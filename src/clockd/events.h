/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Events a journal reader selects by kind: each is logged as a line like
 * any other (log.h), and when stderr is the journal it goes there through
 * sd_journal_sendv() instead, with MESSAGE_ID naming its kind and
 * CLOCKD_* fields (the device, the fault, the state...), so that
 * `journalctl MESSAGE_ID=...` or `CLOCKD_DEVICE=/dev/hpet` finds it. The
 * ids are the catalogue in clockd(8), JOURNAL FIELDS.
 */
#ifndef CLOCKD_EVENTS_H
#define CLOCKD_EVENTS_H

/* The kinds' MESSAGE_IDs (128-bit, as systemd-id128 makes them). */
#define EV_STATE "3922ec23399449bda1c859bb20965944"     /* the clock's state changed */
#define EV_STEP "1ec360eb25e04ea5b38a328de80960c9"      /* CLOCKD_REALTIME stepped */
#define EV_FAULT "39828344345e4c0d994cfec8b47a6b05"     /* a device failed */
#define EV_RECOVERED "ff04e0621e20481a8d5c86cc3a39a6b7" /* a device works again */
#define EV_LEAP "8a5c6d2a6e9744b18125d223a65b486b"      /* leap second or TAI offset news */

/*
 * Log an event of kind @id at priority @pri: the message from @fmt, and
 * @fields, "KEY=value" lines separated by '\n' (keys CLOCKD_*, upper case;
 * at most 8; may be NULL), which only the journal gets.
 */
void log_event(int pri, const char *id, const char *fields, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif
