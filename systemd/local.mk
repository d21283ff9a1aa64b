# systemd integration: the service (its ExecStart= names the installed
# daemon, so it is generated), the control socket for socket activation,
# clockd-wait.service (clockctl wait, for units that need clockd's time at
# start; generated too), the sysusers.d and tmpfiles.d files. Directories from configure
# (pkg-config systemd, or --with-systemdsystemunitdir, --with-sysusersdir,
# --with-tmpfilesdir).
systemdsystemunit_DATA = systemd/clockd.service systemd/clockd.socket systemd/clockd-wait.service
EXTRA_DIST += systemd/clockd.service.in systemd/clockd.socket systemd/clockd-wait.service.in \
	systemd/clockd.sysusers systemd/clockd.tmpfiles
CLEANFILES += systemd/clockd.service systemd/clockd-wait.service

systemd/clockd.service: $(top_srcdir)/systemd/clockd.service.in Makefile
	$(AM_V_GEN)$(MKDIR_P) systemd && \
	sed -e 's|@sbindir[@]|$(sbindir)|g' $(top_srcdir)/systemd/clockd.service.in >$@.tmp && \
	mv $@.tmp $@

systemd/clockd-wait.service: $(top_srcdir)/systemd/clockd-wait.service.in Makefile
	$(AM_V_GEN)$(MKDIR_P) systemd && \
	sed -e 's|@bindir[@]|$(bindir)|g' $(top_srcdir)/systemd/clockd-wait.service.in >$@.tmp && \
	mv $@.tmp $@

# sysusers.d and tmpfiles.d files are named after the package.
install-data-local: install-clockd-systemd
uninstall-local: uninstall-clockd-systemd
.PHONY: install-clockd-systemd uninstall-clockd-systemd

install-clockd-systemd:
	@$(NORMAL_INSTALL)
	$(MKDIR_P) '$(DESTDIR)$(sysusersdir)' '$(DESTDIR)$(tmpfilesdir)'
	$(INSTALL_DATA) '$(srcdir)/systemd/clockd.sysusers' '$(DESTDIR)$(sysusersdir)/clockd.conf'
	$(INSTALL_DATA) '$(srcdir)/systemd/clockd.tmpfiles' '$(DESTDIR)$(tmpfilesdir)/clockd.conf'

uninstall-clockd-systemd:
	@$(NORMAL_UNINSTALL)
	rm -f '$(DESTDIR)$(sysusersdir)/clockd.conf' '$(DESTDIR)$(tmpfilesdir)/clockd.conf'
