/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Edge events of a simulated GPIO line through clockd's own gpioline
 * backend (src/clockd/ticks/gpioline_v1.c or gpioline_v2.c, the libgpiod
 * API this build was configured for), the code the gpio tick driver runs: request both
 * edges on CHIP's line OFFSET, create READY_FILE so the guest starts
 * pulling the line (gpio-sim's sysfs "pull" attribute), then count events
 * until EXPECTED arrived and no more come for a while. Exact checks: the
 * count, rising/falling alternating from a rising first edge, and kernel
 * timestamps on CLOCK_MONOTONIC that increase and fall inside the time this
 * program waited.
 *
 * usage: gpio-check CHIP OFFSET EXPECTED READY_FILE
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clockd/ticks/gpioline.h"
#include "guest.h"

#define FIRST_EDGE_WAIT_S 20	/* the guest shell is slow under TCG */
#define QUIET_WAIT_S 2		/* no extra event within this: count is final */

struct tally {
	int events;
	int alternating;	/* every edge the opposite of the one before */
	int ts_ok;		/* increasing, inside [start, now] */
	double last_ts;
};

static void count_one(struct tally *t, const struct gpioline_event *ev, double start)
{
	int want_rising = t->events % 2 == 0;
	double ts = (double)ev->ns / 1e9;

	if (ev->rising != want_rising)
		t->alternating = 0;
	if (ts <= t->last_ts || ts < start || ts > guest_now())
		t->ts_ok = 0;
	t->last_ts = ts;
	t->events++;
}

/* Read events until "expected" came and the line stayed quiet. */
static int count_events(struct gpioline *line, int expected, struct tally *t)
{
	double start = guest_now();

	for (;;) {
		int wait_s = t->events >= expected ? QUIET_WAIT_S : FIRST_EDGE_WAIT_S;
		struct gpioline_event ev[GPIOLINE_EVENTS_MAX];
		int r = gpioline_wait(line, (int64_t)wait_s * 1000000000);

		if (r == 0)
			return 0;
		if (r > 0)
			r = gpioline_read(line, ev, GPIOLINE_EVENTS_MAX);
		if (r < 0)
			return -1;
		for (int i = 0; i < r; i++)
			count_one(t, &ev[i], start);
	}
}

static int signal_ready(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd < 0)
		return -1;
	return close(fd);
}

int main(int argc, char **argv)
{
	struct tally t = { 0, 1, 1, 0 };
	struct gpioline *line;
	char name[64];
	int expected, r;

	if (argc != 5) {
		guest_ok(0, "gpio: usage: gpio-check CHIP OFFSET EXPECTED READY_FILE");
		return 2;
	}
	expected = atoi(argv[3]);
	guest_note("gpio: libgpiod %s", gpioline_library());
	line = gpioline_open("gpio-check", argv[1], argv[2], GPIOLINE_BOTH, "clockd-vm");
	if (!guest_ok(line != NULL, "gpio: both-edge events requested on %s line %s%s%s", argv[1],
		      argv[2], line ? "" : ": ", line ? "" : strerror(errno)))
		return 1;
	gpioline_describe(line, name, sizeof(name));
	guest_note("gpio: %s", name);
	if (signal_ready(argv[4]) < 0) {
		guest_ok(0, "gpio: ready file %s: %s", argv[4], strerror(errno));
		goto close_line;
	}
	r = count_events(line, expected, &t);
	guest_ok(r == 0, "gpio: event wait and read without error");
	guest_note("gpio: %d events, expected %d", t.events, expected);
	guest_ok(t.events == expected, "gpio: exactly %d edges counted (%d)", expected, t.events);
	guest_ok(t.events > 0 && t.alternating, "gpio: edges alternate, rising first");
	guest_ok(t.events > 0 && t.ts_ok, "gpio: kernel timestamps increase, on CLOCK_MONOTONIC");
close_line:
	gpioline_close(line);
	return 0;
}
