dist_man_MANS += man/clockd.8 man/clockd.conf.5 man/clockctl.1 man/libclockd.3
