/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "clockd/ticker.h"
#include "shared/log.h"
#include "shared/tickmath.h"

/*
 * Stopping: the main thread sets t->stop and sends the tick thread this
 * signal, whose handler does nothing and is installed without SA_RESTART,
 * so a device wait returns EINTR and the loop sees the flag. The signal is
 * repeated until the thread has gone, in case it arrived just before the
 * thread blocked. (Not pthread_cancel: the thread always leaves through its
 * own code, releasing the page itself.)
 */
#define TICKER_WAKE_SIG SIGRTMIN
#define TICKER_STOP_RETRY_NS 10000000

static void ticker_wake(int sig)
{
	(void)sig;
}

static bool ticker_stopping(struct ticker *t)
{
	return __atomic_load_n(&t->stop, __ATOMIC_ACQUIRE);
}

/* A device error: log the first of a run, and pause a tick period so a
 * broken device cannot spin the thread. */
static void ticker_error(struct ticker *t)
{
	struct timespec nap = ns_to_ts((int64_t)(NSEC_PER_SEC / t->td->hz));

	if (t->errors++ == 0)
		log_warnx("tick %s: device error; the page goes stale until it recovers", t->td->ops->name);
	clock_nanosleep(CLOCK_MONOTONIC, 0, &nap, NULL);
}

static void ticker_loop(struct ticker *t)
{
	while (!ticker_stopping(t)) {
		int64_t n = t->td->ops->wait(t->td, tk_next_tick_deadline(t->tk));

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
	sigset_t mask;

	/* Signals are the main thread's business, but for the wake-up. */
	sigfillset(&mask);
	sigdelset(&mask, TICKER_WAKE_SIG);
	pthread_sigmask(SIG_SETMASK, &mask, NULL);
	/* Default timer slack is 50 us; ticks should be on time. */
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	if (pagefile_take(t->pf) < 0) {
		t->start_error = -1;
		sem_post(&t->ready);
		return NULL;
	}
	tk_update(t->tk);
	sem_post(&t->ready);
	ticker_loop(t);
	pagefile_release(t->pf);
	return NULL;
}

int ticker_start(struct ticker *t, struct tick_device *td, struct timekeeper *tk,
		 struct pagefile *pf)
{
	struct sigaction sa = { .sa_handler = ticker_wake };
	int r;

	memset(t, 0, sizeof(*t));
	t->td = td;
	t->tk = tk;
	t->pf = pf;
	sigemptyset(&sa.sa_mask);
	if (sigaction(TICKER_WAKE_SIG, &sa, NULL) < 0) {
		log_warn("cannot install the tick thread's wake-up signal");
		return -1;
	}
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
	struct timespec deadline;

	__atomic_store_n(&t->stop, true, __ATOMIC_RELEASE);
	do {
		pthread_kill(t->thread, TICKER_WAKE_SIG);
		clock_gettime(CLOCK_REALTIME, &deadline);
		deadline = ns_to_ts(ts_to_ns(&deadline) + TICKER_STOP_RETRY_NS);
	} while (pthread_timedjoin_np(t->thread, NULL, &deadline) == ETIMEDOUT);
	sem_destroy(&t->ready);
}
