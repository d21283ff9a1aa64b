/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <time.h>

#include "clockd/wakeup.h"
#include "shared/log.h"
#include "shared/tickmath.h"

/* How often a thread that has not left yet is interrupted again (its stop
 * flag may have been read just before the signal came). */
#define WAKEUP_RETRY_NS 10000000

static void wakeup_handler(int sig)
{
	(void)sig;
}

int wakeup_install(void)
{
	struct sigaction sa = { .sa_handler = wakeup_handler };

	sigemptyset(&sa.sa_mask);
	if (sigaction(WAKEUP_SIG, &sa, NULL) < 0) {
		log_warn("cannot install the device threads' wake-up signal");
		return -1;
	}
	return 0;
}

void wakeup_thread_mask(void)
{
	sigset_t mask;

	sigfillset(&mask);
	sigdelset(&mask, WAKEUP_SIG);
	pthread_sigmask(SIG_SETMASK, &mask, NULL);
}

void wakeup_join(pthread_t thread)
{
	struct timespec deadline;

	do {
		pthread_kill(thread, WAKEUP_SIG);
		clock_gettime(CLOCK_REALTIME, &deadline);
		deadline = ns_to_ts(ts_to_ns(&deadline) + WAKEUP_RETRY_NS);
	} while (pthread_timedjoin_np(thread, NULL, &deadline) == ETIMEDOUT);
}
