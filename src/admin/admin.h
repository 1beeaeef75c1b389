/*
 * admin.h - the operator's commands: `boinc_gahp --check-config` and
 * `boinc_gahp journal status|backup FILE|verify|prune`.  They use the
 * same settings as the server (config_parse: --journal, --config, the
 * environment) and never serve the GAHP protocol; they print on stdout
 * (no GAHP client is there) and never an authenticator.
 */
#ifndef BOINC_GAHP_ADMIN_H
#define BOINC_GAHP_ADMIN_H

#include "config/config.h"

/* Exit statuses: 0 fine, 1 something is wrong (named on stderr), 2 usage. */
int admin_check_config(const gahp_config *cfg);
/* cfg->operands[0] is "journal". */
int admin_journal(const gahp_config *cfg);

#endif
