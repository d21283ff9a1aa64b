/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A raw control-socket client, for the tests that speak the protocol
 * themselves (tests/ctlsock/rawclient, tests/stress/flood and oomclient):
 * connect, send one message, receive one with its descriptors.
 */
#ifndef CLOCKD_TESTS_CTLRAW_H
#define CLOCKD_TESTS_CTLRAW_H

#include "shared/ctlproto.h"
#include "shared/timerrec.h"

/* The most descriptors a message carries (HELLO_ACK). */
#define CTLRAW_MAXFDS (1 + 2 * TIMER_SHM_MAX_CPUS)

/* A SOCK_SEQPACKET connection to @path: its descriptor, or -1 (errno;
 * EINVAL for a NULL @path). */
int ctlraw_connect(const char *path);
/* Encode and send @m (send(2) @flags, MSG_NOSIGNAL added): 0 or -1. */
int ctlraw_send(int fd, const struct ctl_msg *m, int flags);
/*
 * One message within @timeout_ms (0: only one already there): 1 with *@m
 * decoded and its descriptors in @fds (*@nfds of them, at most
 * CTLRAW_MAXFDS; with @fds NULL they are closed), 0 at the end of the
 * connection, -1 if none came or it does not decode (said on stderr). A
 * daemon that closed on a request it had not read resets the connection:
 * what it sent before closing is still read first.
 */
int ctlraw_recv(int fd, int timeout_ms, struct ctl_msg *m, int *fds, unsigned *nfds);

#endif
