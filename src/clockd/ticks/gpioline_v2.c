/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * gpioline on libgpiod 2.x, the v2 API: a chip opened by path, a line
 * request built from line settings, and an edge event buffer. v2 opens
 * chips by path only; the names v1 accepted (gpiochip0, 0, a label) are
 * looked up here, so a clockd.conf means the same with either library.
 */
#include <dirent.h>
#include <errno.h>
#include <gpiod.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clockd/ticks/gpioline.h"
#include "shared/log.h"

struct gpioline {
	struct gpiod_chip *chip;
	struct gpiod_line_request *req;
	struct gpiod_edge_event_buffer *buf;
	unsigned int offset;
	char name[32]; /* the chip's name, gpiochipN */
};

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

/* The chip under /dev/gpiochip* whose label is @label, or NULL. */
static struct gpiod_chip *open_by_label(const char *label)
{
	struct gpiod_chip *found = NULL;
	struct dirent *de;
	char path[300];
	DIR *dir = opendir("/dev");

	if (!dir)
		return NULL;
	while (!found && (de = readdir(dir))) {
		struct gpiod_chip_info *info;
		struct gpiod_chip *chip;

		if (strncmp(de->d_name, "gpiochip", 8) != 0)
			continue;
		snprintf(path, sizeof(path), "/dev/%s", de->d_name);
		if (!gpiod_is_gpiochip_device(path) || !(chip = gpiod_chip_open(path)))
			continue;
		info = gpiod_chip_get_info(chip);
		if (info && strcmp(gpiod_chip_info_get_label(info), label) == 0)
			found = chip;
		else
			gpiod_chip_close(chip);
		gpiod_chip_info_free(info);
	}
	closedir(dir);
	return found;
}

/* @spec: a path, a chip name (gpiochip0), a number (0) or a label. */
static struct gpiod_chip *open_chip(const char *what, const char *spec)
{
	struct gpiod_chip *chip;
	char path[300];

	if (spec[0] == '/')
		snprintf(path, sizeof(path), "%s", spec);
	else if (all_digits(spec))
		snprintf(path, sizeof(path), "/dev/gpiochip%s", spec);
	else
		snprintf(path, sizeof(path), "/dev/%s", spec);
	chip = gpiod_chip_open(path);
	if (!chip && errno != EACCES && spec[0] != '/')
		chip = open_by_label(spec);
	if (chip)
		return chip;
	if (errno == EACCES) {
		log_warnx("%s %s: permission denied", what, spec);
	} else {
		log_warnx("%s %s: no such GPIO chip (name, number, path or label)", what, spec);
		errno = ENOENT;
	}
	return NULL;
}

/* @spec: an offset on the chip, or a line name; the offset or -1. */
static int find_line(const char *what, struct gpiod_chip *chip, const char *chipname,
		     const char *spec)
{
	struct gpiod_chip_info *info = gpiod_chip_get_info(chip);
	size_t n = info ? gpiod_chip_info_get_num_lines(info) : 0;
	unsigned long off;
	char *end;
	int r;

	gpiod_chip_info_free(info);
	errno = 0;
	off = strtoul(spec, &end, 10);
	if (*spec >= '0' && *spec <= '9' && *end == '\0' && errno == 0) {
		if (off >= n) {
			log_warnx("%s %s line %s: no such line (the chip has %zu lines, 0 to %zu)",
				  what, chipname, spec, n, n ? n - 1 : 0);
			errno = ENOENT;
			return -1;
		}
		return (int)off;
	}
	r = gpiod_chip_get_line_offset_from_name(chip, spec);
	if (r < 0) {
		log_warnx("%s %s line %s: no such line", what, chipname, spec);
		errno = ENOENT;
	}
	return r;
}

static struct gpiod_line_request *request(struct gpiod_chip *chip, unsigned int offset,
					  enum gpioline_edge edge, const char *consumer)
{
	struct gpiod_line_settings *ls = gpiod_line_settings_new();
	struct gpiod_line_config *lc = gpiod_line_config_new();
	struct gpiod_request_config *rc = gpiod_request_config_new();
	struct gpiod_line_request *req = NULL;
	int err;

	if (!ls || !lc || !rc)
		goto out;
	if (gpiod_line_settings_set_direction(ls, GPIOD_LINE_DIRECTION_INPUT) < 0 ||
	    gpiod_line_settings_set_edge_detection(ls, edge == GPIOLINE_BOTH ? GPIOD_LINE_EDGE_BOTH :
						       edge == GPIOLINE_FALLING ? GPIOD_LINE_EDGE_FALLING :
						       GPIOD_LINE_EDGE_RISING) < 0 ||
	    gpiod_line_settings_set_event_clock(ls, GPIOD_LINE_CLOCK_MONOTONIC) < 0 ||
	    gpiod_line_config_add_line_settings(lc, &offset, 1, ls) < 0)
		goto out;
	gpiod_request_config_set_consumer(rc, consumer);
	req = gpiod_chip_request_lines(chip, rc, lc);
out:
	err = errno;
	gpiod_request_config_free(rc);
	gpiod_line_config_free(lc);
	gpiod_line_settings_free(ls);
	errno = err;
	return req;
}

/* Who holds line @offset, for the message of a busy line. */
static void log_busy(const char *what, struct gpiod_chip *chip, const char *chipname,
		     const char *line, unsigned int offset)
{
	struct gpiod_line_info *info = gpiod_chip_get_line_info(chip, offset);
	const char *who = info ? gpiod_line_info_get_consumer(info) : NULL;

	log_warnx("%s %s line %s: line busy (used by %s)", what, chipname, line,
		  who && *who ? who : "another program");
	gpiod_line_info_free(info);
	errno = EBUSY;
}

struct gpioline *gpioline_open(const char *what, const char *chip, const char *line,
			       enum gpioline_edge edge, const char *consumer)
{
	struct gpioline *gl = calloc(1, sizeof(*gl));
	struct gpiod_chip_info *info;
	int off, err;

	if (!gl) {
		log_warn("%s", what);
		return NULL;
	}
	gl->chip = open_chip(what, chip);
	if (!gl->chip)
		goto err_free;
	off = find_line(what, gl->chip, chip, line);
	if (off < 0)
		goto err_close_chip;
	gl->offset = (unsigned int)off;
	gl->req = request(gl->chip, gl->offset, edge, consumer);
	if (!gl->req) {
		if (errno == EBUSY)
			log_busy(what, gl->chip, chip, line, gl->offset);
		else
			log_warn("%s %s line %s: edge events request", what, chip, line);
		goto err_close_chip;
	}
	gl->buf = gpiod_edge_event_buffer_new(GPIOLINE_EVENTS_MAX);
	if (!gl->buf) {
		log_warn("%s %s line %s: edge event buffer", what, chip, line);
		goto err_release;
	}
	info = gpiod_chip_get_info(gl->chip);
	snprintf(gl->name, sizeof(gl->name), "%s", info ? gpiod_chip_info_get_name(info) : chip);
	gpiod_chip_info_free(info);
	return gl;

err_release:
	err = errno;
	gpiod_line_request_release(gl->req);
	errno = err;
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
	gpiod_edge_event_buffer_free(gl->buf);
	gpiod_line_request_release(gl->req);
	gpiod_chip_close(gl->chip);
	free(gl);
}

int gpioline_fd(const struct gpioline *gl)
{
	return gpiod_line_request_get_fd(gl->req);
}

void gpioline_describe(const struct gpioline *gl, char *buf, size_t len)
{
	snprintf(buf, len, "%s line %u", gl->name, gl->offset);
}

int gpioline_wait(struct gpioline *gl, int64_t timeout_ns)
{
	return gpiod_line_request_wait_edge_events(gl->req, timeout_ns);
}

int gpioline_read(struct gpioline *gl, struct gpioline_event *ev, int max)
{
	int n;

	if (max > GPIOLINE_EVENTS_MAX)
		max = GPIOLINE_EVENTS_MAX;
	n = gpiod_line_request_read_edge_events(gl->req, gl->buf, (size_t)max);
	for (int i = 0; i < n; i++) {
		struct gpiod_edge_event *e = gpiod_edge_event_buffer_get_event(gl->buf,
									   (unsigned long)i);

		ev[i].ns = (int64_t)gpiod_edge_event_get_timestamp_ns(e);
		ev[i].rising = gpiod_edge_event_get_event_type(e) == GPIOD_EDGE_EVENT_RISING_EDGE;
	}
	return n;
}

const char *gpioline_library(void)
{
	static char buf[64];

	snprintf(buf, sizeof(buf), "%s (v2 API)", gpiod_api_version());
	return buf;
}
