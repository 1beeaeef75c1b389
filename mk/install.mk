# mk/install.mk - man pages, `make install` / `make uninstall`, the optional
# emulator install, and the Debian package (`make deb`, `make lint-deb`).
# Included by the Makefile; uses its BUILD, MIGRATIONS and binary targets.
#
#   make install [PREFIX=/usr/local] [DESTDIR=]
#     $(PREFIX)/sbin/boinc_gahp              the server
#     $(PREFIX)/share/man/man1/boinc_gahp.1  its man page
#     $(PREFIX)/share/boinc_gahp/            schema.sql + migrations/ (reference)
#     $(PREFIX)/share/doc/boinc_gahp/        README.md, doc/*.md, examples/
#   make install-emulator                    boinc_emu + boinc_emu.1 (test tool)
#   make uninstall                           removes exactly the files above
#
# sbin, not bin or libexec: HTCondor's default is BOINC_GAHP = $(SBIN)/boinc_gahp
# and HTCondor keeps its other GAHPs there, so PREFIX=/usr (the Debian
# package) needs no HTCondor setting at all; users never run it themselves.

PREFIX  ?= /usr/local
DESTDIR ?=
SBINDIR ?= $(PREFIX)/sbin
BINDIR  ?= $(PREFIX)/bin
DATADIR ?= $(PREFIX)/share
MANDIR  ?= $(DATADIR)/man
DOCDIR  ?= $(DATADIR)/doc/boinc_gahp
INSTALL ?= install

# The version and its release date live in src/base/version.h only.
GAHP_VERSION      := $(shell sed -n 's/^\#define GAHP_VERSION "\(.*\)"$$/\1/p' src/base/version.h)
GAHP_RELEASE_DATE := $(shell sed -n 's/^\#define GAHP_RELEASE_DATE "\(.*\)"$$/\1/p' src/base/version.h)

MAN_PAGES := $(BUILD)/man/boinc_gahp.1 $(BUILD)/man/boinc_emu.1
EXAMPLES  := $(BUILD)/examples/boinc_gahp.conf.example \
             $(BUILD)/examples/condor_config.d-boinc_gahp \
             $(BUILD)/examples/boinc_gahp_wrapper.example \
             $(BUILD)/examples/condor_config.d-boinc-job-router
DOCS      := README.md $(wildcard doc/*.md)

.PHONY: man install install-emulator uninstall deb deb-version-check lint-deb

man: $(MAN_PAGES)

# "Rendering" is filling in version and date; man(1)/groff format the roff
# source as is (`man -l build/man/boinc_gahp.1`).
$(BUILD)/man/%.1: man/%.1.in src/base/version.h
	@mkdir -p $(dir $@)
	sed -e 's/@VERSION@/$(GAHP_VERSION)/g' -e 's/@DATE@/$(GAHP_RELEASE_DATE)/g' $< > $@.tmp
	mv $@.tmp $@

# The examples name the installed binary: SBINDIR is filled in.
$(BUILD)/examples/boinc_gahp.conf.example: examples/boinc_gahp.conf
	@mkdir -p $(dir $@)
	cp $< $@
$(BUILD)/examples/condor_config.d-boinc_gahp: examples/condor_config.d-boinc_gahp.in FORCE
	@mkdir -p $(dir $@)
	sed -e 's|@SBINDIR@|$(SBINDIR)|g' $< > $@
$(BUILD)/examples/condor_config.d-boinc-job-router: examples/condor_config.d-boinc-job-router
	@mkdir -p $(dir $@)
	cp $< $@
$(BUILD)/examples/boinc_gahp_wrapper.example: examples/boinc_gahp_wrapper.in FORCE
	@mkdir -p $(dir $@)
	sed -e 's|@SBINDIR@|$(SBINDIR)|g' $< > $@

.PHONY: FORCE
FORCE:

install: $(BUILD)/boinc_gahp $(MAN_PAGES) $(EXAMPLES)
	$(INSTALL) -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(MANDIR)/man1 \
	  $(DESTDIR)$(DATADIR)/boinc_gahp/migrations $(DESTDIR)$(DOCDIR)/examples
	$(INSTALL) -m 0755 $(BUILD)/boinc_gahp $(DESTDIR)$(SBINDIR)/boinc_gahp
	$(INSTALL) -m 0644 $(BUILD)/man/boinc_gahp.1 $(DESTDIR)$(MANDIR)/man1/boinc_gahp.1
	$(INSTALL) -m 0644 schema/schema.sql $(DESTDIR)$(DATADIR)/boinc_gahp/schema.sql
	$(INSTALL) -m 0644 $(MIGRATIONS) $(DESTDIR)$(DATADIR)/boinc_gahp/migrations/
	$(INSTALL) -m 0644 $(DOCS) $(DESTDIR)$(DOCDIR)/
	$(INSTALL) -m 0644 $(EXAMPLES) $(DESTDIR)$(DOCDIR)/examples/

install-emulator: $(BUILD)/boinc_emu $(BUILD)/man/boinc_emu.1
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1
	$(INSTALL) -m 0755 $(BUILD)/boinc_emu $(DESTDIR)$(BINDIR)/boinc_emu
	$(INSTALL) -m 0644 $(BUILD)/man/boinc_emu.1 $(DESTDIR)$(MANDIR)/man1/boinc_emu.1

# Removes what install and install-emulator put there, then the package's
# own directories if they are empty.
uninstall:
	rm -f $(DESTDIR)$(SBINDIR)/boinc_gahp $(DESTDIR)$(BINDIR)/boinc_emu \
	  $(DESTDIR)$(MANDIR)/man1/boinc_gahp.1 $(DESTDIR)$(MANDIR)/man1/boinc_emu.1
	rm -rf $(DESTDIR)$(DATADIR)/boinc_gahp $(DESTDIR)$(DOCDIR)

# ---- Debian package ----------------------------------------------------
# Built with dpkg-buildpackage from a copy of the sources in $(BUILD)/deb,
# so the work tree gets no debian/ build droppings; the .deb is copied to
# $(BUILD)/.  MAKEFLAGS etc. are cleared so that this make's variables and
# job server do not leak into debian/rules.  The package's banner says
# "package <version> git <commit>": the commit of this checkout goes in as
# GAHP_SOURCE_COMMIT (mk/build_id.sh).
DEB_ARCH   := $(shell dpkg --print-architecture 2>/dev/null)
DEB_FILE   := $(BUILD)/boinc-gahp_$(GAHP_VERSION)_$(DEB_ARCH).deb
DEB_STAGE  := $(BUILD)/deb
DEB_SRCDIR := $(DEB_STAGE)/boinc-gahp-$(GAHP_VERSION)
DEB_SOURCES := Makefile mk src migrations schema man examples doc debian README.md

deb: deb-version-check
	rm -rf $(DEB_STAGE)
	mkdir -p $(DEB_SRCDIR)
	cp -a $(DEB_SOURCES) $(DEB_SRCDIR)/
	commit=$$(sh mk/build_id.sh --commit) && cd $(DEB_SRCDIR) && \
	  env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u BUILD -u GAHP_BUILD_ID \
	  GAHP_SOURCE_COMMIT="$$commit" dpkg-buildpackage -b -us -uc -j2
	cp $(DEB_STAGE)/boinc-gahp_$(GAHP_VERSION)_$(DEB_ARCH).deb $(DEB_FILE)
	@echo "built $(DEB_FILE)"

# debian/changelog's top entry must carry src/base/version.h's version and date.
deb-version-check:
	@v=$$(dpkg-parsechangelog -l debian/changelog -S Version) && \
	 d=$$(LC_ALL=C date -u -d "$$(dpkg-parsechangelog -l debian/changelog -S Date)" '+%b %-d %Y') && \
	 if [ "$$v" != "$(GAHP_VERSION)" ] || [ "$$d" != "$(GAHP_RELEASE_DATE)" ]; then \
	   echo "debian/changelog has $$v of $$d, src/base/version.h $(GAHP_VERSION) of $(GAHP_RELEASE_DATE)" >&2; \
	   exit 1; \
	 fi

lint-deb: $(DEB_FILE)
	lintian --fail-on error $(DEB_FILE)

$(DEB_FILE):
	$(MAKE) deb
