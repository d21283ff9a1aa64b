/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * gpioline on libgpiod 1.6, the v1 API (Debian 12): a line object of the
 * chip, requested for edge events; gpiod_chip_open_lookup() takes a chip
 * name, number, path or label.
 */
#include <errno.h>
#include <gpiod.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clockd/ticks/gpioline.h"
#include "shared/log.h"
#include "shared/tickmath.h"

struct gpioline {
	struct gpiod_chip *chip;
	struct gpiod_line *line;
};

static struct gpiod_chip *open_chip(const char *what, const char *name)
{
	struct gpiod_chip *chip = gpiod_chip_open_lookup(name);

	if (chip)
		return chip;
	if (errno == EACCES) {
		log_warnx("%s %s: permission denied", what, name);
	} else {
		log_warnx("%s %s: no such GPIO chip (name, number, path or label)", what, name);
		errno = ENOENT;
	}
	return NULL;
}

/* @spec: an offset on the chip, or a line name. */
static struct gpiod_line *find_line(const char *what, struct gpiod_chip *chip,
				    const char *chipname, const char *spec)
{
	unsigned int n = gpiod_chip_num_lines(chip);
	struct gpiod_line *line;
	unsigned long off;
	char *end;

	errno = 0;
	off = strtoul(spec, &end, 10);
	if (*spec >= '0' && *spec <= '9' && *end == '\0' && errno == 0) {
		if (off >= n) {
			log_warnx("%s %s line %s: no such line (the chip has %u lines, 0 to %u)",
				  what, chipname, spec, n, n - 1);
			errno = ENOENT;
			return NULL;
		}
		line = gpiod_chip_get_line(chip, (unsigned int)off);
	} else {
		line = gpiod_chip_find_line(chip, spec);
	}
	if (!line) {
		log_warnx("%s %s line %s: no such line", what, chipname, spec);
		errno = ENOENT;
	}
	return line;
}

static int request(struct gpiod_line *line, enum gpioline_edge edge, const char *consumer)
{
	switch (edge) {
	case GPIOLINE_FALLING:
		return gpiod_line_request_falling_edge_events(line, consumer);
	case GPIOLINE_BOTH:
		return gpiod_line_request_both_edges_events(line, consumer);
	case GPIOLINE_RISING:
		break;
	}
	return gpiod_line_request_rising_edge_events(line, consumer);
}

struct gpioline *gpioline_open(const char *what, const char *chip, const char *line,
			       enum gpioline_edge edge, const char *consumer)
{
	struct gpioline *gl = calloc(1, sizeof(*gl));
	int err;

	if (!gl) {
		log_warn("%s", what);
		return NULL;
	}
	gl->chip = open_chip(what, chip);
	if (!gl->chip)
		goto err_free;
	gl->line = find_line(what, gl->chip, chip, line);
	if (!gl->line)
		goto err_close_chip;
	if (request(gl->line, edge, consumer) < 0) {
		if (errno == EBUSY)
			log_warnx("%s %s line %s: line busy (used by %s)", what, chip, line,
				  gpiod_line_consumer(gl->line) ? gpiod_line_consumer(gl->line)
								: "another program");
		else
			log_warn("%s %s line %s: edge events request", what, chip, line);
		goto err_close_chip;
	}
	return gl;

err_close_chip:
	err = errno;
	gpiod_chip_close(gl->chip);
	errno = err;
err_free:
	err = errno;
	free(gl);
	errno = err;
	return NULL;
}

void gpioline_close(struct gpioline *gl)
{
	if (!gl)
		return;
	gpiod_line_release(gl->line);
	gpiod_chip_close(gl->chip);
	free(gl);
}

int gpioline_fd(const struct gpioline *gl)
{
	return gpiod_line_event_get_fd(gl->line);
}

void gpioline_describe(const struct gpioline *gl, char *buf, size_t len)
{
	snprintf(buf, len, "%s line %u", gpiod_chip_name(gl->chip), gpiod_line_offset(gl->line));
}

int gpioline_wait(struct gpioline *gl, int64_t timeout_ns)
{
	struct timespec timeout = ns_to_ts(timeout_ns);

	return gpiod_line_event_wait(gl->line, &timeout);
}

int gpioline_read(struct gpioline *gl, struct gpioline_event *ev, int max)
{
	struct gpiod_line_event raw[GPIOLINE_EVENTS_MAX];
	int n;

	if (max > GPIOLINE_EVENTS_MAX)
		max = GPIOLINE_EVENTS_MAX;
	n = gpiod_line_event_read_multiple(gl->line, raw, (unsigned int)max);
	for (int i = 0; i < n; i++) {
		ev[i].ns = ts_to_ns(&raw[i].ts);
		ev[i].rising = raw[i].event_type == GPIOD_LINE_EVENT_RISING_EDGE;
	}
	return n;
}

const char *gpioline_library(void)
{
	static char buf[64];

	snprintf(buf, sizeof(buf), "%s (v1 API)", gpiod_version_string());
	return buf;
}
