# Benchmarks: `make bench` (not part of `make check`).
EXTRA_PROGRAMS += bench/bench-read bench/tick-floor bench/bench-wheel bench/bench-ring bench/bench-timers
bench_tick_floor_SOURCES = bench/tick-floor.c
bench_bench_read_SOURCES = bench/bench-read.c
bench_bench_read_LDADD = src/libclockd/libclockd.la
# The daemon's timer wheel against libevent's timers.
bench_bench_wheel_SOURCES = bench/bench-wheel.c
bench_bench_wheel_CFLAGS = $(AM_CFLAGS) $(LIBEVENT_CFLAGS)
bench_bench_wheel_LDADD = src/clockd/libclockd-daemon.la $(LIBEVENT_LIBS)
# The shared-memory ring, producer and consumer threads on two CPUs.
bench_bench_ring_SOURCES = bench/bench-ring.c
bench_bench_ring_LDADD = src/shared/libshared.la -lpthread
# Client timers through libclockd against the daemon: latency vs timerfd,
# arm+cancel throughput.
bench_bench_timers_SOURCES = bench/bench-timers.c
bench_bench_timers_LDADD = src/libclockd/libclockd.la -lpthread
# CPU per expiry (#27): libclockd timers against timerfds and POSIX timers.
EXTRA_PROGRAMS += bench/bench-expiry
bench_bench_expiry_SOURCES = bench/bench-expiry.c
bench_bench_expiry_LDADD = src/libclockd/libclockd.la -lpthread -lrt
CLEANFILES += bench/bench-expiry
# The discipline against a simulated 1 PPS, faster than real time: the
# fixed window against the adaptive history.
EXTRA_PROGRAMS += bench/bench-discipline
bench_bench_discipline_SOURCES = bench/bench-discipline.c
bench_bench_discipline_LDADD = src/clockd/libclockd-daemon.la -lm
EXTRA_DIST += bench/run.sh bench/bench-cyclictest.sh
CLEANFILES += bench/bench-read bench/tick-floor bench/bench-wheel bench/bench-ring bench/bench-timers \
	bench/bench-discipline bench/bench-delay bench/bench-expiry

# What make bench runs, built alone by bench-programs (CI builds them, so
# that a benchmark which no longer links is seen before make bench).
bench-programs: bench/bench-read bench/tick-floor bench/bench-wheel bench/bench-ring bench/bench-delay \
	bench/bench-timers bench/bench-expiry \
	bench/bench-discipline src/clockd/clockd \
	src/clockctl/clockctl src/libclockd/libclockd-preload.la tests/stress/flood tests/sysref/follow
bench: bench-programs
	$(SHELL) $(srcdir)/bench/run.sh '$(abs_top_builddir)'
.PHONY: bench bench-programs
# ndelay/udelay accuracy: clockd_ndelay vs a spin on the kernel's clock.
EXTRA_PROGRAMS += bench/bench-delay
bench_bench_delay_SOURCES = bench/bench-delay.c
bench_bench_delay_LDADD = src/libclockd/libclockd.la
CLEANFILES += bench/bench-delay
