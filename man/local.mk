# The man pages are made from man/*.in with the version of AC_INIT (the
# one version source: tests/docs/version.sh) and the install directories
# they name.
man_pages = man/clockd.8 man/clockd.conf.5 man/clockctl.1 man/libclockd.3 \
	man/clockd_add_timer.3 man/clockd_timer_create.3 man/clockd_clock_nanosleep.3 \
	man/clockd_state_name.3 man/clockd_timer_cpu_stats.3 \
	man/clockd_status.3 man/clockd_time_after.3 man/libclockd-preload.8 \
	man/clockd_set_reconnect_timeout.3
man_MANS += $(man_pages)
EXTRA_DIST += $(man_pages:=.in)
CLEANFILES += $(man_pages)

$(man_pages): Makefile $(srcdir)/man/subst.sh
	$(AM_V_GEN)$(MKDIR_P) man && \
	$(SHELL) $(srcdir)/man/subst.sh $(srcdir)/$@.in PACKAGE_VERSION='$(PACKAGE_VERSION)' \
		pkglibdir='$(pkglibdir)' systemdsystemunitdir='$(systemdsystemunitdir)' \
		sysusersdir='$(sysusersdir)' tmpfilesdir='$(tmpfilesdir)' >$@.tmp && \
	mv $@.tmp $@
man/clockd.8: $(srcdir)/man/clockd.8.in
man/clockd.conf.5: $(srcdir)/man/clockd.conf.5.in
man/clockctl.1: $(srcdir)/man/clockctl.1.in
man/libclockd.3: $(srcdir)/man/libclockd.3.in
man/clockd_add_timer.3: $(srcdir)/man/clockd_add_timer.3.in
man/clockd_timer_create.3: $(srcdir)/man/clockd_timer_create.3.in
man/clockd_clock_nanosleep.3: $(srcdir)/man/clockd_clock_nanosleep.3.in
man/libclockd-preload.8: $(srcdir)/man/libclockd-preload.8.in
man/clockd_state_name.3: $(srcdir)/man/clockd_state_name.3.in
man/clockd_timer_cpu_stats.3: $(srcdir)/man/clockd_timer_cpu_stats.3.in
man/clockd_status.3: $(srcdir)/man/clockd_status.3.in
man/clockd_time_after.3: $(srcdir)/man/clockd_time_after.3.in
man/clockd_set_reconnect_timeout.3: $(srcdir)/man/clockd_set_reconnect_timeout.3.in

# "man clockd_ndelay", "man clockd_time_after" (an inline function of the
# header): each function a section-3 page names in its NAME
# section gets, at install, a page of its own name holding only
# ".so man3/PAGE.3" (man-pages(7)), PAGE being its group's page.
man3_group_pages = man/libclockd.3 man/clockd_add_timer.3 \
	man/clockd_timer_create.3 man/clockd_clock_nanosleep.3 \
	man/clockd_state_name.3 man/clockd_timer_cpu_stats.3 \
	man/clockd_status.3 man/clockd_time_after.3 man/clockd_set_reconnect_timeout.3
EXTRA_DIST += man/names.sh man/subst.sh

install-data-local: install-man3-links
uninstall-local: uninstall-man3-links
.PHONY: install-man3-links uninstall-man3-links

install-man3-links: $(man3_group_pages)
	@$(NORMAL_INSTALL)
	$(MKDIR_P) '$(DESTDIR)$(man3dir)'
	@$(SHELL) $(srcdir)/man/names.sh -l $(man3_group_pages) | \
	while read -r n b; do \
	  echo " $(DESTDIR)$(man3dir)/$$n.3: .so man3/$$b"; \
	  echo ".so man3/$$b" >"$(DESTDIR)$(man3dir)/$$n.3" || exit 1; \
	done

uninstall-man3-links: $(man3_group_pages)
	@$(NORMAL_UNINSTALL)
	@$(SHELL) $(srcdir)/man/names.sh -l $(man3_group_pages) | \
	while read -r n b; do \
	  echo " rm -f '$(DESTDIR)$(man3dir)/$$n.3'"; \
	  rm -f "$(DESTDIR)$(man3dir)/$$n.3"; \
	done
