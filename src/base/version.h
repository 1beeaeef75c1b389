/*
 * version.h - the ONE place that defines boinc_gahp's version and its
 * release date.  Everything else derives from here: --version and the GAHP
 * banner (src/config/config.c), the man pages and `make deb` (the Makefile reads
 * these two lines with sed, mk/install.mk), and the Debian changelog, whose
 * top entry a test and `make deb` check against these lines.
 *
 * Releasing: change both lines together, then add a debian/changelog entry
 * with the same version and date.
 */
#ifndef BOINC_GAHP_VERSION_H
#define BOINC_GAHP_VERSION_H

#define GAHP_VERSION "1.0.0"
/* Release date of GAHP_VERSION as the banner shows it ("Mon DD YYYY", the
 * format of HTCondor's own version strings), never the day of the build. */
#define GAHP_RELEASE_DATE "Nov 21 2026"

#endif
