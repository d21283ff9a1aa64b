dist_man_MANS += man/clockd.8 man/clockd.conf.5 man/clockctl.1 man/libclockd.3 \
	man/clockd_add_timer.3 man/clockd_timer_create.3 man/libclockd-preload.8
