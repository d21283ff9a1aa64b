# Benchmarks: `make bench` (not part of `make check`).
EXTRA_PROGRAMS += bench/bench-read bench/tick-floor
bench_tick_floor_SOURCES = bench/tick-floor.c
bench_bench_read_SOURCES = bench/bench-read.c
bench_bench_read_LDADD = src/libclockd/libclockd.la
EXTRA_DIST += bench/run.sh
CLEANFILES += bench/bench-read bench/tick-floor

bench: bench/bench-read bench/tick-floor src/clockd/clockd
	$(SHELL) $(srcdir)/bench/run.sh '$(abs_top_builddir)'
.PHONY: bench
