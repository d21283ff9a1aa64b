// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The guest's moving PHC: the kernel's ptp_mock (drivers/ptp/ptp_mock.c of
 * Linux 6.12, which only netdevsim instantiates) made a clock of its own at
 * module load, with no device behind it. Built out of tree by fetch.sh.
 */
#include <linux/err.h>
#include <linux/module.h>

#include "ptp_mock.h"

static struct mock_phc *phc;

static int __init ptp_mock_vm_init(void)
{
	phc = mock_phc_create(NULL);
	return IS_ERR(phc) ? PTR_ERR(phc) : 0;
}

static void __exit ptp_mock_vm_exit(void)
{
	mock_phc_destroy(phc);
}

module_init(ptp_mock_vm_init);
module_exit(ptp_mock_vm_exit);
