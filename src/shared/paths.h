/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Where an instance of clockd keeps its control socket: beside its time
 * page (the same directory, file "control") unless configured, so that a
 * daemon on a private page (tests, a second instance) has a private socket
 * too, and a client that names the page ($CLOCKD_SHM) finds the socket.
 */
#ifndef CLOCKD_SHARED_PATHS_H
#define CLOCKD_SHARED_PATHS_H

#include <stdio.h>
#include <string.h>

#define CLOCKD_SOCKET_NAME "control"

/* The socket beside @page into @out (@len bytes). 0, or -1 if it does not
 * fit. A page with no directory part has the socket in ".". */
static inline int socket_beside_page(const char *page, char *out, size_t len)
{
	const char *slash = strrchr(page, '/');
	int n;

	if (!slash)
		n = snprintf(out, len, "%s", CLOCKD_SOCKET_NAME);
	else
		n = snprintf(out, len, "%.*s/%s", (int)(slash - page), page, CLOCKD_SOCKET_NAME);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

#endif
