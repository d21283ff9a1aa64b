/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * /dev/hpet in a real kernel: it opens, HPET_INFO answers, the register
 * block mmaps and its main counter advances between two reads, and a timer
 * set to 64 Hz (HPET_IRQFREQ + HPET_IE_ON) wakes blocking reads. The rate
 * is printed, not judged: under qemu's TCG only "a few interrupts came"
 * is a fair test. Linked statically: it runs in the busybox guest.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/hpet.h>

#include "irqrate.h"

/* Register offsets in the HPET specification (1.0a, section 2.3). */
#define HPET_CAP_OFFSET 0x00	/* period in fs in bits 63..32 */
#define HPET_COUNTER_OFFSET 0xf0
#define HPET_MAP_LEN 4096
#define IRQ_HZ 64

static uint64_t reg64(const volatile uint8_t *base, unsigned off)
{
	return *(const volatile uint64_t *)(base + off);
}

static void check_counter(int fd)
{
	volatile uint8_t *regs;
	uint64_t period_fs, c0, c1;
	struct timespec pause = { 0, 10 * 1000 * 1000 };

	regs = mmap(NULL, HPET_MAP_LEN, PROT_READ, MAP_SHARED, fd, 0);
	if (!guest_ok(regs != MAP_FAILED, "hpet: register block mmaps%s%s",
		      regs == MAP_FAILED ? ": " : "", regs == MAP_FAILED ? strerror(errno) : "")) {
		guest_ok(0, "hpet: main counter advances # no mapping");
		return;
	}
	period_fs = reg64(regs, HPET_CAP_OFFSET) >> 32;
	c0 = reg64(regs, HPET_COUNTER_OFFSET);
	nanosleep(&pause, NULL);
	c1 = reg64(regs, HPET_COUNTER_OFFSET);
	guest_note("hpet: period %llu fs (%.3f MHz), counter %llu then %llu",
		   (unsigned long long)period_fs,
		   period_fs ? 1e9 / (double)period_fs : 0.0,
		   (unsigned long long)c0, (unsigned long long)c1);
	guest_ok(c1 > c0, "hpet: main counter advances between two reads");
	munmap((void *)(uintptr_t)regs, HPET_MAP_LEN);
}

static void check_interrupts(int fd)
{
	double rate = 0;
	int n = 0;

	if (!ioctl_ok(fd, HPET_IRQFREQ, IRQ_HZ, "hpet: HPET_IRQFREQ 64") ||
	    !ioctl_ok(fd, HPET_IE_ON, 0, "hpet: HPET_IE_ON")) {
		guest_ok(0, "hpet: interrupts wake blocking reads # not enabled");
		return;
	}
	n = irq_count_reads(fd, 2.0, &rate);
	guest_note("hpet: %d reads, %.1f per second at %d Hz", n, rate, IRQ_HZ);
	guest_ok(n >= 5, "hpet: interrupts wake blocking reads (%d)", n);
	ioctl(fd, HPET_IE_OFF, 0);
}

int main(void)
{
	struct hpet_info info;
	int fd;

	fd = open("/dev/hpet", O_RDONLY);
	if (!guest_ok(fd >= 0, "hpet: /dev/hpet opens%s%s", fd < 0 ? ": " : "",
		      fd < 0 ? strerror(errno) : ""))
		return 1;
	memset(&info, 0, sizeof info);
	if (ioctl_ok(fd, HPET_INFO, (unsigned long)&info, "hpet: HPET_INFO"))
		guest_note("hpet: timer %hu, flags %#lx, irqfreq %lu",
			   info.hi_timer, info.hi_flags, info.hi_ireqfreq);
	check_counter(fd);
	check_interrupts(fd);
	close(fd);
	return 0;
}
