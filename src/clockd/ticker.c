/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "clockd/ticker.h"
#include "shared/log.h"
#include "shared/tickmath.h"

static void ticker_release(void *arg)
{
	struct ticker *t = arg;

	pagefile_release(t->pf);
}

/* A device error: log the first of a run, and pause a tick period so a
 * broken device cannot spin the thread. */
static void ticker_error(struct ticker *t)
{
	struct timespec nap = ns_to_ts((int64_t)(NSEC_PER_SEC / t->td->hz));

	if (t->errors++ == 0)
		log_warnx("tick %s: device error; the page goes stale until it recovers", t->td->ops->name);
	pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
	clock_nanosleep(CLOCK_MONOTONIC, 0, &nap, NULL);
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
}

static void ticker_loop(struct ticker *t)
{
	for (;;) {
		int64_t n;

		/* Cancellation only while blocked in the device. */
		pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
		n = t->td->ops->wait(t->td, tk_next_tick_deadline(t->tk));
		pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
		if (n < 0) {
			ticker_error(t);
			continue;
		}
		if (t->errors) {
			log_notice("tick %s: recovered after %llu errors", t->td->ops->name,
				   (unsigned long long)t->errors);
			t->errors = 0;
		}
		if (n > 0)
			tk_update(t->tk);
	}
}

static void *ticker_main(void *arg)
{
	struct ticker *t = arg;
	sigset_t all;

	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
	/* Signals are the main thread's business. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	/* Default timer slack is 50 us; ticks should be on time. */
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	if (pagefile_take(t->pf) < 0) {
		t->start_error = -1;
		sem_post(&t->ready);
		return NULL;
	}
	tk_update(t->tk);
	sem_post(&t->ready);
	pthread_cleanup_push(ticker_release, t);
	ticker_loop(t);
	pthread_cleanup_pop(1);
	return NULL;
}

int ticker_start(struct ticker *t, struct tick_device *td, struct timekeeper *tk,
		 struct pagefile *pf)
{
	int r;

	memset(t, 0, sizeof(*t));
	t->td = td;
	t->tk = tk;
	t->pf = pf;
	sem_init(&t->ready, 0, 0);
	r = pthread_create(&t->thread, NULL, ticker_main, t);
	if (r != 0) {
		errno = r;
		log_warn("cannot start the tick thread");
		return -1;
	}
	pthread_setname_np(t->thread, "clockd-tick");
	while (sem_wait(&t->ready) < 0 && errno == EINTR)
		;
	if (t->start_error < 0) {
		pthread_join(t->thread, NULL);
		return -1;
	}
	return 0;
}

void ticker_stop(struct ticker *t)
{
	pthread_cancel(t->thread);
	pthread_join(t->thread, NULL);
	sem_destroy(&t->ready);
}
