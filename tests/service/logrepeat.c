/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * log_repeat: a condition that repeats is logged when a run starts and
 * when it ends (with the count), never per occurrence; a new run logs
 * again; an end with no run logs nothing; errno is kept; an end "once
 * quiet" waits for the last occurrence to be old enough. The log goes to
 * stderr, redirected here to a file that is read back.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* tap.h before log.h: <stdnoreturn.h> turns tap.h's noreturn attribute
 * into _Noreturn. */
#include "tests/tap.h"
#include "shared/log.h"

static char text[8192];

/* Everything logged since the last call. */
static const char *logged(FILE *f)
{
	size_t n;

	fflush(stderr);
	n = fread(text, 1, sizeof(text) - 1, f);
	text[n] = '\0';
	return text;
}

static int lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

int main(void)
{
	char path[] = "/tmp/clockd-logrepeat.XXXXXX";
	struct log_repeat r = { 0 };
	int fd = mkstemp(path);
	FILE *back;
	const char *s;

	if (fd < 0 || dup2(fd, 2) < 0 || !(back = fopen(path, "r")))
		tap_bail("cannot redirect stderr to a temporary file");
	unlink(path);
	unsetenv("JOURNAL_STREAM");
	log_init("clockd", LOG_INFO);
	tap_plan(9);

	for (int i = 0; i < 1000; i++) {
		errno = EMFILE;
		log_repeat(&r, LOG_WARNING, true, "control: accept");
	}
	tap_ok(errno == EMFILE, "errno is kept");
	s = logged(back);
	tap_ok(lines(s) == 1 && strcmp(s, "clockd: control: accept: Too many open files\n") == 0,
	       "1000 occurrences: one line, the first (got %d line(s))", lines(s));
	log_repeat_end(&r, "control: accept works again");
	s = logged(back);
	tap_ok(strcmp(s, "clockd: control: accept works again (after 1000 occurrences)\n") == 0,
	       "the end of the run: one line with the count");
	log_repeat_end(&r, "control: accept works again");
	tap_ok(*logged(back) == '\0', "an end with no run logs nothing");
	log_repeat(&r, LOG_WARNING, false, "again");
	log_repeat(&r, LOG_WARNING, false, "again");
	s = logged(back);
	tap_ok(strcmp(s, "clockd: again\n") == 0, "a new run is logged again, once");
	log_set_level(LOG_ERR);
	log_repeat_end(&r, "over");
	log_set_level(LOG_INFO);
	log_repeat(&r, LOG_WARNING, false, "third");
	s = logged(back);
	tap_ok(strcmp(s, "clockd: third\n") == 0, "a run ended while its notice was filtered still resets");
	log_repeat_end(&r, "over");
	logged(back);

	log_repeat(&r, LOG_NOTICE, false, "refused");
	log_repeat(&r, LOG_NOTICE, false, "refused");
	s = logged(back);
	log_repeat_end_quiet(&r, 10000000000LL, "quiet for 10 s");
	tap_ok(strcmp(s, "clockd: refused\n") == 0 && *logged(back) == '\0' && r.count == 2,
	       "a run is not ended before its last occurrence is quiet_ns old");
	usleep(20000);
	errno = EINTR;
	log_repeat_end_quiet(&r, 10000000, "quiet for 10 ms");
	tap_ok(errno == EINTR && strcmp(logged(back), "clockd: quiet for 10 ms (after 2 occurrences)\n") == 0,
	       "it is ended once the last occurrence is old enough, with the count (and errno kept)");
	log_repeat_end_quiet(&r, 0, "again");
	tap_ok(*logged(back) == '\0', "no run, no line");
	return tap_done();
}
