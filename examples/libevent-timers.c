/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * clockd timers in a libevent program: every callback runs in the event
 * loop's thread, through clockd_fd() and clockd_dispatch().
 *
 *   libevent-timers [N]
 *
 * Arms two kernel-flavoured timers (each re-arming itself a few jiffies
 * ahead), a periodic POSIX timer with a function (CLOCKD_SIGEV_THREAD_CPU:
 * after clockd_fd() it too runs in the loop) and a periodic POSIX timer
 * notified through its own descriptor (CLOCKD_SIGEV_FD), then stops after
 * N expiries in all (default 100). Exit status 0 when N were seen within
 * 30 s, 1 otherwise.
 */
#include <errno.h>
#include <event2/event.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <clockd/clockd.h>

struct app {
	struct event_base *base;
	uint64_t want, seen;
	uint64_t kernel, posix_fn, posix_fd;
	clockd_timer_t fn_timer, fd_timer;
};

static struct app app;

static void seen(uint64_t *kind, uint64_t n)
{
	*kind += n;
	app.seen += n;
	if (app.seen >= app.want)
		event_base_loopbreak(app.base);
}

/* A kernel-flavoured timer: re-arm a few jiffies ahead, as a driver does. */
static void on_kernel_timer(struct clockd_timer *t, void *arg)
{
	uintptr_t step = (uintptr_t)arg;

	seen(&app.kernel, 1);
	if (clockd_mod_timer(t, clockd_get_jiffies_64() + step) < 0)
		fprintf(stderr, "mod_timer: %s\n", strerror(errno));
}

static void on_posix_fn(union sigval v)
{
	(void)v;
	seen(&app.posix_fn, 1 + (uint64_t)clockd_timer_getoverrun(app.fn_timer));
}

/* The clockd descriptor is readable: run what is due, here. */
static void on_clockd_fd(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	if (clockd_dispatch() < 0)
		fprintf(stderr, "clockd_dispatch: %s\n", strerror(errno));
}

/* The POSIX timer's own descriptor: 8 bytes, the expiries since the last
 * read. */
static void on_timer_fd(evutil_socket_t fd, short what, void *arg)
{
	uint64_t n;

	(void)what;
	(void)arg;
	if (read(fd, &n, sizeof(n)) == (ssize_t)sizeof(n))
		seen(&app.posix_fd, n);
}

static void on_timeout(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	event_base_loopbreak(app.base);
}

static int arm_posix(void)
{
	struct clockd_sigevent fn = { .notify = CLOCKD_SIGEV_THREAD_CPU, .cpu = -1, .fn = on_posix_fn };
	struct clockd_sigevent fd = { .notify = CLOCKD_SIGEV_FD, .cpu = -1 };
	struct itimerspec every_5ms = { .it_value = { 0, 5000000 }, .it_interval = { 0, 5000000 } };
	struct itimerspec every_7ms = { .it_value = { 0, 7000000 }, .it_interval = { 0, 7000000 } };

	if (clockd_timer_create(CLOCKD_MONOTONIC, &fn, &app.fn_timer) < 0 ||
	    clockd_timer_create(CLOCKD_REALTIME, &fd, &app.fd_timer) < 0)
		return -1;
	if (clockd_timer_settime(app.fn_timer, 0, &every_5ms, NULL) < 0 ||
	    clockd_timer_settime(app.fd_timer, 0, &every_7ms, NULL) < 0)
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	struct timeval limit = { .tv_sec = 30 };
	struct clockd_timer k1, k2;
	struct event *ev_clockd, *ev_fd, *ev_timeout;
	int cfd;

	app.want = argc > 1 ? strtoull(argv[1], NULL, 10) : 100;
	/* First: from now on callbacks run only in clockd_dispatch(). */
	cfd = clockd_fd();
	if (cfd < 0) {
		fprintf(stderr, "clockd_fd: %s\n", strerror(errno));
		return 1;
	}
	app.base = event_base_new();
	if (!app.base)
		return 1;
	clockd_timer_setup(&k1, on_kernel_timer, (void *)(uintptr_t)2);
	clockd_timer_setup(&k2, on_kernel_timer, (void *)(uintptr_t)3);
	if (clockd_add_timer(&k1, clockd_get_jiffies_64() + 2) < 0 ||
	    clockd_add_timer(&k2, clockd_get_jiffies_64() + 3) < 0 || arm_posix() < 0) {
		fprintf(stderr, "arming: %s\n", strerror(errno));
		return 1;
	}
	ev_clockd = event_new(app.base, cfd, EV_READ | EV_PERSIST, on_clockd_fd, NULL);
	ev_fd = event_new(app.base, clockd_timer_fd(app.fd_timer), EV_READ | EV_PERSIST, on_timer_fd, NULL);
	ev_timeout = evtimer_new(app.base, on_timeout, NULL);
	event_add(ev_clockd, NULL);
	event_add(ev_fd, NULL);
	evtimer_add(ev_timeout, &limit);

	event_base_dispatch(app.base);

	printf("expiries: %" PRIu64 " (kernel timers %" PRIu64 ", POSIX function %" PRIu64 ", POSIX fd %" PRIu64
	       ")\n", app.seen, app.kernel, app.posix_fn, app.posix_fd);
	clockd_del_timer_sync(&k1);
	clockd_del_timer_sync(&k2);
	clockd_timer_delete(app.fn_timer);
	clockd_timer_delete(app.fd_timer);
	event_free(ev_clockd);
	event_free(ev_fd);
	event_free(ev_timeout);
	event_base_free(app.base);
	return app.seen >= app.want && app.kernel && app.posix_fn && app.posix_fd ? 0 : 1;
}
