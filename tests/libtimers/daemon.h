/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * For the timer tests: a private clockd per test, on a page and a control
 * socket in a temporary directory, killed at exit. The test's own calls
 * (and its children's) reach it through $CLOCKD_SHM and $CLOCKD_SOCKET,
 * which td_init() sets.
 */
#ifndef CLOCKD_TESTS_LIBTIMERS_DAEMON_H
#define CLOCKD_TESTS_LIBTIMERS_DAEMON_H

#include <stdbool.h>
#include <stdint.h>

/* Make the directory and set the environment; bail out on failure. */
void td_init(void);
/* Start clockd with "-o KEY=VALUE" options @opts (NULL-terminated, may be
 * NULL) besides page and control_socket; wait (10 s) until the page is
 * live and the socket is there. A daemon that comes up without a control
 * socket makes the whole test a skip ("1..0 # SKIP"), once; other
 * failures bail out. */
void td_start(const char *const *opts);
/* Start clockd as td_start() does, but stop it (SIGSTOP) as soon as its
 * control socket file is there, before it serves it and likely before
 * its page is live; the caller sends SIGCONT (td_signal). */
void td_start_stopped(const char *const *opts);
/* Send @sig to the daemon. */
void td_signal(int sig);
/* The daemon's pid (0 if none runs). */
int td_pid(void);
/* Send @sig to the daemon and reap it. */
void td_stop(int sig);
/* After the daemon of an earlier td_start() went away: the library's
 * next arming call reports ECONNRESET once; take that report now. */
void td_absorb_reset(void);
/* The directory (for extra files). */
const char *td_dir(void);
/* Kernel CLOCK_MONOTONIC, ns. */
int64_t td_now(void);
/* Sleep @ns. */
void td_sleep(int64_t ns);
/* Wait until *@flag (atomic load) is at least @want, polling every
 * 1 ms, for at most @timeout_ns; true if it got there. */
bool td_wait_u64(const uint64_t *flag, uint64_t want, int64_t timeout_ns);
/* The CPUs this process may run on, as a mask of the first 64. */
uint64_t td_cpus(void);

#endif
