/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <systemd/sd-journal.h>

#include "clockd/events.h"
#include "shared/log.h"

#define MAX_FIELDS 8

/* Send to the journal; 0, or < 0 when it is not there (then the line goes
 * to stderr as usual, fields lost). */
static int send_journal(int pri, const char *id, const char *fields, const char *msg)
{
	char m[1100], p[16], i[48], ident[] = "SYSLOG_IDENTIFIER=clockd", f[MAX_FIELDS][256];
	struct iovec iov[4 + MAX_FIELDS + 1];
	int n = 0;

	snprintf(m, sizeof(m), "MESSAGE=%s", msg);
	snprintf(p, sizeof(p), "PRIORITY=%d", pri);
	snprintf(i, sizeof(i), "MESSAGE_ID=%s", id);
	iov[n++] = (struct iovec){ m, strlen(m) };
	iov[n++] = (struct iovec){ p, strlen(p) };
	iov[n++] = (struct iovec){ i, strlen(i) };
	iov[n++] = (struct iovec){ ident, strlen(ident) };
	for (int k = 0; fields && *fields && k < MAX_FIELDS; k++) {
		size_t len = strcspn(fields, "\n");

		snprintf(f[k], sizeof(f[k]), "%.*s", (int)len, fields);
		/* A field without its '=' would make the whole entry invalid. */
		if (strchr(f[k], '='))
			iov[n++] = (struct iovec){ f[k], strlen(f[k]) };
		fields += len + (fields[len] == '\n');
	}
	return sd_journal_sendv(iov, n);
}

void log_event(int pri, const char *id, const char *fields, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (pri > log_get_level())
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (log_to_journal() && send_journal(pri, id, fields, msg) >= 0)
		return;
	log_at(pri, "%s", msg);
}
