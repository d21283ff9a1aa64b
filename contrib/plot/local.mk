# The gnuplot script that plots the statistics logs (logdir), installed
# with the data: $(pkgdatadir)/clockd-plot.gp.
dist_pkgdata_DATA = contrib/plot/clockd-plot.gp
