// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The guest's kernel PPS source, /dev/ppsN named "clockd-vm": an assert
 * event at every whole second of CLOCK_REALTIME, time stamped by the PPS
 * core (pps_get_ts), as pps-ktimer does in its kernel timer. Linux's
 * pps-ktimer (drivers/pps/clients, not built by Debian) is no PPS to
 * measure against: it re-arms a timer-wheel timer HZ jiffies ahead, so
 * its phase against the second is arbitrary and a one-second timeout falls
 * in a wheel level of 8 jiffies' granularity (32 ms at Debian's HZ 250):
 * its edges wander by tens of milliseconds.
 *
 * Here an hrtimer is due LEAD_NS before the second and its callback spins
 * to the second, as the guest's gpio toggler does in user space
 * (clockd-check pps): under TCG a vCPU woken from idle by a timer comes
 * late by up to tens of milliseconds on a loaded host, a running one is
 * on time. A callback already past the second stamps at once (a late
 * edge, as a real source's interrupt can be). The spin runs with
 * interrupts off: the guest loads this module only for its own check.
 * Built out of tree by fetch.sh.
 */
#include <linux/err.h>
#include <linux/hrtimer.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/pps_kernel.h>
#include <asm/processor.h>

#define LEAD_NS (5 * NSEC_PER_MSEC)

static struct pps_device *pps;
static struct hrtimer timer;

/* LEAD_NS before the next whole second of CLOCK_REALTIME after @now. */
static ktime_t next_due(u64 now)
{
	return ns_to_ktime((now + LEAD_NS) / NSEC_PER_SEC * NSEC_PER_SEC + NSEC_PER_SEC - LEAD_NS);
}

static enum hrtimer_restart pps_vm_event(struct hrtimer *t)
{
	u64 second = (ktime_get_real_ns() + LEAD_NS) / NSEC_PER_SEC * NSEC_PER_SEC;
	struct pps_event_time ts;

	while (ktime_get_real_ns() < second)
		cpu_relax();
	pps_get_ts(&ts);
	pps_event(pps, &ts, PPS_CAPTUREASSERT, NULL);
	hrtimer_set_expires(t, next_due(ktime_get_real_ns()));
	return HRTIMER_RESTART;
}

static struct pps_source_info pps_vm_info = {
	.name = "clockd-vm",
	.path = "",
	.mode = PPS_CAPTUREASSERT | PPS_OFFSETASSERT | PPS_CANWAIT | PPS_TSFMT_TSPEC,
	.owner = THIS_MODULE,
};

static int __init pps_vm_init(void)
{
	pps = pps_register_source(&pps_vm_info, PPS_CAPTUREASSERT | PPS_OFFSETASSERT);
	if (IS_ERR(pps))
		return PTR_ERR(pps);
	hrtimer_init(&timer, CLOCK_REALTIME, HRTIMER_MODE_ABS);
	timer.function = pps_vm_event;
	hrtimer_start(&timer, next_due(ktime_get_real_ns()), HRTIMER_MODE_ABS);
	return 0;
}

static void __exit pps_vm_exit(void)
{
	hrtimer_cancel(&timer);
	pps_unregister_source(pps);
}

module_init(pps_vm_init);
module_exit(pps_vm_exit);
MODULE_DESCRIPTION("clockd-vm: a kernel PPS source at each whole second of CLOCK_REALTIME");
MODULE_LICENSE("GPL");
