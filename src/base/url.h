/*
 * url.h - a BOINC project URL, checked and put in the one form every
 * layer compares and stores (the configuration's default project, the
 * protocol's BOINC_SELECT_PROJECT).  Pure string work: no network.
 */
#ifndef BOINC_GAHP_URL_H
#define BOINC_GAHP_URL_H

/*
 * Only http:// and https:// URLs with a host and no white space, control
 * character, '?' or '#' are accepted; a missing trailing '/' is appended
 * (real servers answer 403/404 to "<url>submit_rpc_handler.php" without
 * it).  Returns a malloc'd string; NULL with *why set to a static message
 * when the URL is refused, NULL with *why NULL when memory ran out.
 */
char *url_normalize(const char *url, const char **why);

/* 1 if url starts with http:// or https:// (any case), else 0. */
int url_is_http(const char *url);

#endif
