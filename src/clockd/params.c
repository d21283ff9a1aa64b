/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdlib.h>
#include <string.h>

#include "clockd/params.h"
#include "clockd/rtsched.h"

static struct sim_params sim_params(const struct clockd_config *cfg)
{
	return (struct sim_params){
		.script = cfg->sim_script,
		.rate_ppm = cfg->sim_rate_ppm,
		.jitter_ns = cfg->sim_jitter_ns,
		.seed = cfg->sim_seed,
	};
}

static void devices_params(const struct clockd_config *cfg, struct devices_params *p)
{
	p->sources = cfg->source;
	p->ticks = cfg->tick;
	p->source = (struct source_params){
		.hpet_device = cfg->hpet_device,
		.phc_device = cfg->phc_device,
		.posix_clock = cfg->posix_clock,
		.tsc_calibrate_ms = cfg->tsc_calibrate_ms,
		.sim = sim_params(cfg),
	};
	p->tick = (struct tick_params){
		.hz = cfg->hz,
		.stall_ticks = cfg->stall_ticks,
		.hpet_device = cfg->hpet_device,
		.rtc_device = cfg->rtc_device,
		.gpio = { cfg->gpio_chip, cfg->gpio_line, cfg->gpio_edge, cfg->gpio_debounce_us },
		.sim = sim_params(cfg),
	};
}

void params_from_config(const struct clockd_config *cfg, struct clockd_params *p)
{
	memset(p, 0, sizeof(*p));
	devices_params(cfg, &p->devices);
	p->tk = (struct tk_params){
		.hz = cfg->hz,
		.jiffies_wrap_after = cfg->jiffies_wrap_after,
		.stale_after_ms = cfg->stale_after_ms,
		.extrapolate_max_s = cfg->extrapolate_max_s,
		.stall_ticks = cfg->stall_ticks,
		.source_recover_s = cfg->source_recover_s,
		.max_rate_ppm = cfg->discipline_max_ppm,
	};
	p->tickthread = (struct tickthread_params){ .priority = cfg->tick_priority, .stall_ticks = cfg->stall_ticks };
	p->ref = (struct ref_params){
		.name = cfg->reference,
		.pps = { cfg->pps_chip, cfg->pps_line, cfg->pps_edge, 0 },
		.phc_device = cfg->phc_device,
		.pps_device = cfg->pps_device,
		.sim = sim_params(cfg),
	};
	p->disc = (struct discipline_params){
		.step_ms = cfg->discipline_step_ms,
		.restep_ms = cfg->discipline_restep_ms,
		.max_ppm = cfg->discipline_max_ppm,
	};
	p->ex = (struct export_params){
		.hz = cfg->hz,
		.ntp_shm_unit = cfg->ntp_shm_unit,
		/* The config checked the syntax (octal, at most 0777). */
		.ntp_shm_mode = (unsigned)strtoul(cfg->ntp_shm_mode, NULL, 8),
		.chrony_sock = cfg->chrony_sock,
	};
	p->tb = (struct tb_params){
		.priority = (int)cfg->timer_priority,
		.hz = cfg->hz,
		.ring_slots = cfg->timer_ring_slots,
		.max_timers = cfg->client_max_timers,
		.max_timers_per_user = cfg->max_timers_per_user,
		.lead_ns = cfg->timer_lead_ns,
		.lead_other_ns = cfg->timer_lead_other_ns,
		.min_period_ns = (uint64_t)cfg->timer_min_period_us * 1000,
		.max_expiries_per_sec = cfg->client_max_expiries_per_sec,
	};
	p->srv = (struct ctlserver_params){
		.max_clients = cfg->max_clients,
		.max_clients_per_user = cfg->max_clients_per_user,
		.max_msgs_per_sec = cfg->client_max_msgs_per_sec,
		.max_timers = cfg->client_max_timers,
		.max_timers_per_user = cfg->max_timers_per_user,
		.ring_slots = cfg->timer_ring_slots,
		.stats_gid = (gid_t)-1,
	};
}

void params_settle_sched(struct clockd_params *p)
{
	struct rtsched_prio prio = { .tick = p->tickthread.priority, .timer = (uint32_t)p->tb.priority };

	rtsched_settle(&prio);
	p->tickthread.priority = prio.tick;
	p->tb.priority = (int)prio.timer;
}
