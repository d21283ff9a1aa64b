# Real-kernel device tests: make check-hw boots Debian's kernel under qemu
# with clockd and the device checks below (tests/vm/README.md). Not part of
# make check or distcheck: it downloads ~225 MB once and needs qemu.
#
# The guest programs are plain rules, not automake programs: they are
# built for check-hw only, with the project's warnings but without the
# user's CFLAGS/LDFLAGS (a sanitizer build cannot link -static).
VM_GUEST = tests/vm/hpet-check tests/vm/rtc-check
VM_GUEST_CFLAGS = $(AM_CPPFLAGS) $(WARN_CFLAGS) -O2 -g

tests/vm/hpet-check tests/vm/rtc-check: tests/vm/guest.h tests/vm/irqrate.h
tests/vm/hpet-check: tests/vm/hpet-check.c
	$(AM_V_CCLD)$(MKDIR_P) tests/vm && \
	$(CC) $(VM_GUEST_CFLAGS) -static -o $@ $(srcdir)/tests/vm/hpet-check.c
tests/vm/rtc-check: tests/vm/rtc-check.c
	$(AM_V_CCLD)$(MKDIR_P) tests/vm && \
	$(CC) $(VM_GUEST_CFLAGS) -static -o $@ $(srcdir)/tests/vm/rtc-check.c

# Dynamic on purpose: the guest loads Debian's libgpiod.so, as the clockd
# GPIO driver will.
if HAVE_LIBGPIOD
VM_GUEST += tests/vm/gpio-check
tests/vm/gpio-check: tests/vm/gpio-check.c tests/vm/guest.h
	$(AM_V_CCLD)$(MKDIR_P) tests/vm && \
	$(CC) $(VM_GUEST_CFLAGS) $(LIBGPIOD_CFLAGS) -o $@ \
		$(srcdir)/tests/vm/gpio-check.c $(LIBGPIOD_LIBS)
endif

# clockd-check reads the page through the freshly built libclockd.so (the
# guest gets it with clockctl's libraries).
VM_GUEST += tests/vm/clockd-check
tests/vm/clockd-check: tests/vm/clockd-check.c tests/vm/guest.h src/libclockd/libclockd.la
	$(AM_V_CCLD)$(MKDIR_P) tests/vm && \
	$(CC) $(VM_GUEST_CFLAGS) -o $@ $(srcdir)/tests/vm/clockd-check.c \
		-Lsrc/libclockd/.libs -lclockd -lm

CLEANFILES += tests/vm/hpet-check tests/vm/rtc-check tests/vm/gpio-check \
	tests/vm/clockd-check
EXTRA_DIST += tests/vm/README.md tests/vm/fetch.sh tests/vm/mkinitramfs.sh \
	tests/vm/run.sh tests/vm/init.sh tests/vm/guest.h tests/vm/irqrate.h \
	tests/vm/hpet-check.c tests/vm/rtc-check.c tests/vm/gpio-check.c \
	tests/vm/clockd-check.c tests/vm/ptp-mock-init.c

check-hw: all $(VM_GUEST)
	top_srcdir='$(abs_top_srcdir)' top_builddir='$(abs_top_builddir)' \
		$(SHELL) $(top_srcdir)/tests/vm/run.sh $(VM_GUEST)
.PHONY: check-hw
