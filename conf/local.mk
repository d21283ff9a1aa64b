# The default configuration file: every key commented out at its default,
# so installing it changes nothing. It is installed as
# $(sysconfdir)/clockd.conf only when no such file exists (an
# administrator's file survives a reinstall), and uninstalled only while it
# is still identical to the shipped one (so `make distcheck` finds no file
# left, and an edited file is never lost).
EXTRA_DIST += conf/clockd.conf

install-data-local: install-clockd-conf
uninstall-local: uninstall-clockd-conf
.PHONY: install-clockd-conf uninstall-clockd-conf

install-clockd-conf:
	@$(NORMAL_INSTALL)
	$(MKDIR_P) '$(DESTDIR)$(sysconfdir)'
	@if test -e '$(DESTDIR)$(sysconfdir)/clockd.conf'; then \
	  echo "$(DESTDIR)$(sysconfdir)/clockd.conf exists: not replaced"; \
	else \
	  echo " $(INSTALL_DATA) '$(srcdir)/conf/clockd.conf' '$(DESTDIR)$(sysconfdir)/clockd.conf'"; \
	  $(INSTALL_DATA) '$(srcdir)/conf/clockd.conf' '$(DESTDIR)$(sysconfdir)/clockd.conf'; \
	fi

uninstall-clockd-conf:
	@$(NORMAL_UNINSTALL)
	@if cmp -s '$(srcdir)/conf/clockd.conf' '$(DESTDIR)$(sysconfdir)/clockd.conf'; then \
	  echo " rm -f '$(DESTDIR)$(sysconfdir)/clockd.conf'"; \
	  rm -f '$(DESTDIR)$(sysconfdir)/clockd.conf'; \
	elif test -e '$(DESTDIR)$(sysconfdir)/clockd.conf'; then \
	  echo "$(DESTDIR)$(sysconfdir)/clockd.conf was changed: kept"; \
	fi
