/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/simscript.h"

static const struct {
	const char *name;
	enum sim_action action;
	enum { ARG_NONE, ARG_DURATION, ARG_OPT_DURATION, ARG_SIGNED_DURATION, ARG_COUNT, ARG_PPM } arg;
} sim_actions[] = {
	{ "stall", SIM_STALL, ARG_OPT_DURATION },
	{ "step", SIM_STEP, ARG_SIGNED_DURATION },
	{ "spurious", SIM_SPURIOUS, ARG_COUNT },
	{ "miss", SIM_MISS, ARG_COUNT },
	{ "rate", SIM_RATE, ARG_PPM },
	{ "vanish", SIM_VANISH, ARG_NONE },
	{ "late", SIM_LATE, ARG_DURATION },
};

static const struct {
	const char *unit;
	int64_t ns;
} units[] = { { "ns", 1 }, { "us", 1000 }, { "ms", 1000000 }, { "s", 1000000000 } };

/* "[+-]N" then, for a duration, a unit. */
static bool parse_number(const char *w, bool sign_ok, bool unit, int64_t *out)
{
	const char *p = w;
	long long n;
	char *end;

	if ((*p == '+' || *p == '-') && !sign_ok)
		return false;
	if (*p == '+' || *p == '-')
		p++;
	if (!isdigit((unsigned char)*p))
		return false;
	errno = 0;
	n = strtoll(w, &end, 10);
	if (errno == ERANGE || n > 1000000000000ll || n < -1000000000000ll)
		return false;
	if (!unit) {
		*out = n;
		return *end == '\0';
	}
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].unit) == 0)
			/* A time past 2^63 ns (292 years) is no time. */
			return !__builtin_mul_overflow(n, (long long)units[i].ns, out);
	}
	return false;
}

/* One event "AT ACTION [ARG]" (already split into words). */
static int parse_event(char **w, int nw, struct sim_event *ev, char *why, size_t len)
{
	size_t a;

	if (nw < 2 || !parse_number(w[0], false, true, &ev->at_ns)) {
		snprintf(why, len, "'%s': expected 'TIME ACTION [ARG]', TIME like 2s or 150ms", w[0]);
		return -1;
	}
	for (a = 0; a < sizeof(sim_actions) / sizeof(sim_actions[0]); a++)
		if (strcmp(w[1], sim_actions[a].name) == 0)
			break;
	if (a == sizeof(sim_actions) / sizeof(sim_actions[0])) {
		snprintf(why, len, "'%s': unknown action (stall, step, spurious, miss, rate, vanish, late)", w[1]);
		return -1;
	}
	ev->action = sim_actions[a].action;
	ev->arg = 0;
	switch (sim_actions[a].arg) {
	case ARG_NONE:
		if (nw == 2)
			return 0;
		break;
	case ARG_OPT_DURATION:
		if (nw == 2) {
			ev->arg = INT64_MAX;
			return 0;
		}
		if (nw == 3 && parse_number(w[2], false, true, &ev->arg) && ev->arg > 0)
			return 0;
		break;
	case ARG_DURATION:
	case ARG_SIGNED_DURATION:
		if (nw == 3 && parse_number(w[2], sim_actions[a].arg == ARG_SIGNED_DURATION, true, &ev->arg) &&
		    ev->arg != 0)
			return 0;
		break;
	case ARG_COUNT:
		if (nw == 3 && parse_number(w[2], false, false, &ev->arg) && ev->arg > 0 && ev->arg <= 1000000)
			return 0;
		break;
	case ARG_PPM:
		if (nw == 3 && parse_number(w[2], true, false, &ev->arg) && ev->arg >= -100000 &&
		    ev->arg <= 100000)
			return 0;
		break;
	}
	snprintf(why, len, "'%s %s': bad or missing argument (see clockd.conf(5))", w[0], w[1]);
	return -1;
}

int simscript_parse(const char *text, struct sim_event *ev, char *why, size_t len)
{
	char buf[1024], *save = NULL, *part;
	int n = 0;

	if (strlen(text) >= sizeof(buf)) {
		snprintf(why, len, "script longer than %zu bytes", sizeof(buf) - 1);
		return -1;
	}
	snprintf(buf, sizeof(buf), "%s", text);
	for (part = strtok_r(buf, ";", &save); part; part = strtok_r(NULL, ";", &save)) {
		char *w[4], *wsave = NULL;
		int nw = 0;

		for (char *t = strtok_r(part, " \t", &wsave); t; t = strtok_r(NULL, " \t", &wsave)) {
			if (nw == 4) {
				snprintf(why, len, "'%s %s': too many words", w[0], w[1]);
				return -1;
			}
			w[nw++] = t;
		}
		if (nw == 0)
			continue;
		if (n == SIM_MAX_EVENTS) {
			snprintf(why, len, "more than %d events", SIM_MAX_EVENTS);
			return -1;
		}
		if (parse_event(w, nw, &ev[n], why, len) < 0)
			return -1;
		if (n > 0 && ev[n].at_ns < ev[n - 1].at_ns) {
			snprintf(why, len, "'%s %s': events must be in time order", w[0], w[1]);
			return -1;
		}
		n++;
	}
	return n;
}

int simscript_validate(const char *text, char *why, size_t len)
{
	struct sim_event ev[SIM_MAX_EVENTS];

	return simscript_parse(text, ev, why, len) < 0 ? -1 : 0;
}
