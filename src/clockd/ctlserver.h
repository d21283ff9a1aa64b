/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The control socket server (main thread, in the daemon's libevent loop):
 * a Unix SOCK_SEQPACKET socket speaking shared/ctlproto.h. Per connection:
 *   - identity from SO_PEERCRED at accept (pid, uid, gid);
 *   - HELLO makes a timer client (timerbase.h) and answers HELLO_ACK with
 *     the client's memfd and eventfds (SCM_RIGHTS, same datagram);
 *   - ARM / CANCEL / STATS for that client; CPU_STATS / CLIENT_STATS for
 *     anyone (a monitor such as clockctl timers needs no HELLO);
 *   - a message-rate quota (token bucket of max_msgs_per_sec, burst the
 *     same): a message over it gets ERROR EAGAIN unprocessed; a client
 *     still sending at 10 times the rate for a whole second is dropped;
 *   - at most max_clients connections, max_clients_per_user of them with
 *     one uid: one more gets ERROR EDQUOT and is closed.
 * Nothing a client sends can block the daemon: every send is
 * MSG_DONTWAIT, and a client whose socket buffer is full is dropped. A
 * client that disconnects, dies, or whose shared memory a base found
 * corrupt (checked on every message and every second) loses all its
 * timers at once (tb_client_free).
 */
#ifndef CLOCKD_CTLSERVER_H
#define CLOCKD_CTLSERVER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <event2/event.h>

#include "clockd/timers/timerbase.h"

struct ctlserver;

struct ctlserver_params {
	const char *path;          /* for messages, and unlinked at close if bound here */
	uint32_t max_clients;
	uint32_t max_clients_per_user; /* 0: no limit but max_clients */
	uint32_t max_msgs_per_sec; /* per client */
	uint32_t max_timers;       /* per client (HELLO_ACK, decode limits) */
	uint32_t max_timers_per_user; /* a HELLO gets at most this many timer
				    * ids; the bases count the armed ones
				    * against it (0: no limit) */
	uint32_t ring_slots;       /* HELLO_ACK */
	gid_t stats_gid;           /* CLIENT_STATS shows its members (and root) every
				    * client, others their own uid's; (gid_t)-1: none */
	bool owns_path;            /* ctlserver_adopt: unlink path at close (bound by
				    * ctlserver_listen, not passed by systemd) */
};

/*
 * Bind @p->path (mode 0660) and serve it. A socket file left there by a
 * daemon that is gone (nobody answers on it) is replaced; anything else
 * (another file type, a live socket) is refused. 0, or -1 logged.
 */
int ctlserver_open(struct ctlserver **out, struct event_base *base, struct timer_bases *tb,
		   const struct ctlserver_params *p);
/*
 * Bind @path (mode 0660, group @gid unless (gid_t)-1) and listen: the
 * first half of ctlserver_open, for a daemon that binds while privileged
 * and serves after dropping privileges. Same stale-socket rule. The fd,
 * or -1 logged.
 */
int ctlserver_listen(const char *path, gid_t gid);
/* Serve an already-listening socket @fd (socket activation, issue #6, or
 * ctlserver_listen's); takes it over, and unlinks @p->path at close only
 * if @p->owns_path. 0, or -1 logged (fd closed). */
int ctlserver_adopt(struct ctlserver **out, struct event_base *base, struct timer_bases *tb,
		    const struct ctlserver_params *p, int fd);
/* Drop every client (their timers go), close the socket and unlink the
 * path if ctlserver_open bound it. Before timer_bases_stop. NULL: no-op. */
void ctlserver_close(struct ctlserver *s);

#endif
