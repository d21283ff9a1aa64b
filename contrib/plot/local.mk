# The gnuplot script that plots the statistics logs (logdir), installed
# with the data: $(pkgdatadir)/clockd-plot.gp.
dist_pkgdata_DATA = contrib/plot/clockd-plot.gp
# The plot the README shows (45 s of a daemon on the simulated PPS, 20 ppm
# fast, 10 us of jitter, with examples/libevent-timers running).
EXTRA_DIST += contrib/plot/example.png
