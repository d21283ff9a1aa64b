# Real-kernel device tests: make check-hw boots Debian's kernel under qemu
# with clockd and the device checks below (tests/vm/README.md). Not part of
# make check or distcheck: it downloads ~225 MB once and needs qemu.
#
# The guest programs are plain rules, not automake programs: they are
# built for check-hw only, with the project's warnings but without the
# user's CFLAGS/LDFLAGS (a sanitizer build cannot link -static).
VM_GUEST = tests/vm/hpet-check tests/vm/rtc-check
VM_GUEST_CFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir) $(WARN_CFLAGS) -O2 -g

tests/vm/hpet-check tests/vm/rtc-check: tests/vm/guest.h tests/vm/irqrate.h
tests/vm/hpet-check: tests/vm/hpet-check.c
	$(AM_V_CCLD)$(MKDIR_P) tests/vm && \
	$(CC) $(VM_GUEST_CFLAGS) -static -o $@ $(srcdir)/tests/vm/hpet-check.c
tests/vm/rtc-check: tests/vm/rtc-check.c
	$(AM_V_CCLD)$(MKDIR_P) tests/vm && \
	$(CC) $(VM_GUEST_CFLAGS) -static -o $@ $(srcdir)/tests/vm/rtc-check.c

# Dynamic on purpose: the guest loads the libgpiod.so the build used
# (Debian's package, or the private 2.x build of build-aux/ci.sh), as
# clockd does (mkinitramfs.sh copies what ldd finds: the run path names
# it). gpio-check runs clockd's own gpioline backend (v1 or v2).
if HAVE_LIBGPIOD
VM_GUEST += tests/vm/gpio-check
tests/vm/gpio-check: tests/vm/gpio-check.c tests/vm/guest.h src/clockd/ticks/gpioline.h \
		$(GPIOLINE_SOURCES) src/shared/log.c
	$(AM_V_CCLD)$(MKDIR_P) tests/vm && \
	$(CC) $(VM_GUEST_CFLAGS) $(LIBGPIOD_CFLAGS) -o $@ \
		$(srcdir)/tests/vm/gpio-check.c $(srcdir)/$(GPIOLINE_SOURCES) \
		$(srcdir)/src/shared/log.c $(LIBGPIOD_LIBS) -Wl,-rpath,$(LIBGPIOD_LIBDIR)
endif

# clockd-check reads the page through the freshly built libclockd.so (the
# guest gets it with clockctl's libraries).
VM_GUEST += tests/vm/clockd-check
tests/vm/clockd-check: tests/vm/clockd-check.c tests/vm/guest.h tests/util.h src/libclockd/libclockd.la
	$(AM_V_CCLD)$(MKDIR_P) tests/vm && \
	$(CC) $(VM_GUEST_CFLAGS) -o $@ $(srcdir)/tests/vm/clockd-check.c \
		-Lsrc/libclockd/.libs -lclockd -lm

CLEANFILES += tests/vm/hpet-check tests/vm/rtc-check tests/vm/gpio-check \
	tests/vm/clockd-check tests/vm/sd-arm
EXTRA_DIST += tests/vm/README.md tests/vm/fetch.sh tests/vm/mkinitramfs.sh \
	tests/vm/run.sh tests/vm/init.sh tests/vm/guest.h tests/vm/irqrate.h \
	tests/vm/hpet-check.c tests/vm/rtc-check.c tests/vm/gpio-check.c \
	tests/vm/clockd-check.c tests/vm/modules.sh tests/vm/console.sh tests/vm/run-systemd.sh \
	tests/vm/sd-rootfs.sh tests/vm/sd-mkinitramfs.sh tests/vm/sd-init.sh \
	tests/vm/sd-test.sh tests/vm/sd-arm.c tests/vm/ptp-mock-init.c \
	tests/vm/pps-hrtimer.c

# The CPU hotplug test of make check (opt-in there: taking a CPU offline
# disturbs the tests beside it), run in a 2-CPU guest of its own
# (CLOCKD_VM_CHECKS=hotplug).
check-hw: all $(VM_GUEST) tests/lifecycle/hotplug
	top_srcdir='$(abs_top_srcdir)' top_builddir='$(abs_top_builddir)' \
		$(SHELL) $(top_srcdir)/tests/vm/run.sh $(VM_GUEST) tests/lifecycle/hotplug
.PHONY: check-hw

# make check-systemd: the same kernel on a Debian root with systemd as PID
# 1 (built with mmdebstrap, cached), clockd installed from this build's
# make install (or CLOCKD_VM_DEBS=DIR of .debs), the units checked under
# systemd itself (tests/vm/README.md). Exit 77 (skipped) is not an error
# here: the output says 1..0 # SKIP and why.
tests/vm/sd-arm: tests/vm/sd-arm.c src/libclockd/libclockd.la
	$(AM_V_CCLD)$(MKDIR_P) tests/vm && \
	$(CC) $(VM_GUEST_CFLAGS) -o $@ $(srcdir)/tests/vm/sd-arm.c \
		-Lsrc/libclockd/.libs -lclockd

check-systemd: all tests/vm/sd-arm
	top_srcdir='$(abs_top_srcdir)' top_builddir='$(abs_top_builddir)' \
	CLOCKD_VM_BINDIR='$(bindir)' CLOCKD_VM_SYSCONFDIR='$(sysconfdir)' \
		$(SHELL) $(top_srcdir)/tests/vm/run-systemd.sh tests/vm/sd-arm || \
		test $$? -eq 77
.PHONY: check-systemd
