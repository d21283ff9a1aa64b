/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A minimal TAP producer for test programs (Automake tap-driver.sh). */
#ifndef CLOCKD_TESTS_TAP_H
#define CLOCKD_TESTS_TAP_H

#include <stdbool.h>

/* Print the plan "1..n". */
void tap_plan(int n);
/* One result line; returns @ok so it can be used in conditions. */
bool tap_ok(bool ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "ok N # SKIP why" */
void tap_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "# ..." diagnostics */
void tap_diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "Bail out! ..." and exit 99 (a hard error, not a test failure). */
void tap_bail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
/* Exit status for the end of main: 0 if all passed, 1 otherwise. */
int tap_done(void);

#endif
