/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Edge events of a simulated GPIO line through libgpiod 1.6, the API the
 * clockd GPIO driver will use: request both edges on CHIP's line OFFSET,
 * create READY_FILE so the guest starts pulling the line (gpio-sim's sysfs
 * "pull" attribute), then count events until EXPECTED arrived and no more
 * come for a while. Exact checks: the count, rising/falling alternating
 * from a rising first edge, and kernel timestamps on CLOCK_MONOTONIC that
 * increase and fall inside the time this program waited.
 *
 * usage: gpio-check CHIP OFFSET EXPECTED READY_FILE
 */
#include <errno.h>
#include <fcntl.h>
#include <gpiod.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "guest.h"

#define FIRST_EDGE_WAIT_S 20	/* the guest shell is slow under TCG */
#define QUIET_WAIT_S 2		/* no extra event within this: count is final */

struct tally {
	int events;
	int alternating;	/* every edge the opposite of the one before */
	int ts_ok;		/* increasing, inside [start, now] */
	double last_ts;
};

static double ts_seconds(const struct timespec *ts)
{
	return (double)ts->tv_sec + (double)ts->tv_nsec / 1e9;
}

static void count_one(struct tally *t, const struct gpiod_line_event *ev, double start)
{
	int want = t->events % 2 == 0 ? GPIOD_LINE_EVENT_RISING_EDGE
				      : GPIOD_LINE_EVENT_FALLING_EDGE;
	double ts = ts_seconds(&ev->ts);

	if (ev->event_type != want)
		t->alternating = 0;
	if (ts <= t->last_ts || ts < start || ts > guest_now())
		t->ts_ok = 0;
	t->last_ts = ts;
	t->events++;
}

/* Read events until "expected" came and the line stayed quiet. */
static int count_events(struct gpiod_line *line, int expected, struct tally *t)
{
	double start = guest_now();

	for (;;) {
		int wait_s = t->events >= expected ? QUIET_WAIT_S : FIRST_EDGE_WAIT_S;
		struct timespec timeout = { wait_s, 0 };
		struct gpiod_line_event ev;
		int r = gpiod_line_event_wait(line, &timeout);

		if (r == 0)
			return 0;
		if (r < 0 || gpiod_line_event_read(line, &ev) < 0)
			return -1;
		count_one(t, &ev, start);
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
	struct gpiod_chip *chip;
	struct gpiod_line *line;
	int expected, r;

	if (argc != 5) {
		guest_ok(0, "gpio: usage: gpio-check CHIP OFFSET EXPECTED READY_FILE");
		return 2;
	}
	expected = atoi(argv[3]);
	chip = gpiod_chip_open(argv[1]);
	if (!guest_ok(chip != NULL, "gpio: gpiod_chip_open %s%s%s", argv[1],
		      chip ? "" : ": ", chip ? "" : strerror(errno)))
		return 1;
	guest_note("gpio: chip %s label %s, %u lines", gpiod_chip_name(chip),
		   gpiod_chip_label(chip), gpiod_chip_num_lines(chip));
	line = gpiod_chip_get_line(chip, (unsigned)atoi(argv[2]));
	r = line ? gpiod_line_request_both_edges_events(line, "clockd-vm") : -1;
	if (!guest_ok(r == 0, "gpio: both-edge events requested on line %s", argv[2]))
		goto close_chip;
	if (signal_ready(argv[4]) < 0) {
		guest_ok(0, "gpio: ready file %s: %s", argv[4], strerror(errno));
		goto close_chip;
	}
	r = count_events(line, expected, &t);
	guest_ok(r == 0, "gpio: event wait and read without error");
	guest_note("gpio: %d events, expected %d", t.events, expected);
	guest_ok(t.events == expected, "gpio: exactly %d edges counted (%d)", expected, t.events);
	guest_ok(t.events > 0 && t.alternating, "gpio: edges alternate, rising first");
	guest_ok(t.events > 0 && t.ts_ok, "gpio: kernel timestamps increase, on CLOCK_MONOTONIC");
close_chip:
	gpiod_chip_close(chip);
	return 0;
}
