/*
 * boinc_xml_tree.h - the reply stages and tree helpers of boinc_xml.c,
 * shared with the other reply parsers of the boinc module
 * (boinc_xml_jobs.c).  Inside src/boinc/ only.
 */
#ifndef BOINC_GAHP_BOINC_XML_TREE_H
#define BOINC_GAHP_BOINC_XML_TREE_H

#include "boinc/boinc_internal.h"

#include <libxml/tree.h>
#include <stddef.h>

/* Stages 1 and 2 (boinc_xml.c's header): the raw checks, then the
 * recovered tree in *doc (the caller frees it with xmlFreeDoc).
 * BOINC_OK, or the error in err. */
int boinc_xml_open_reply(const char *rpc, const char *body, size_t len,
                         xmlDocPtr *doc, boinc_error *err);
/* Stage 2 alone: libxml2 in recover mode, no network, no external
 * entities, bare '&' escaped first.  NULL with err set when not XML. */
xmlDocPtr boinc_xml_parse_tree(const char *body, size_t len, boinc_error *err);

/* 1 when n is an element named name. */
int boinc_xml_is(const xmlNode *n, const char *name);
/* The first element named name at or below n (pre-order), or NULL. */
xmlNode *boinc_xml_find(xmlNode *n, const char *name);
/* A direct child named name, else the first descendant so named. */
xmlNode *boinc_xml_child(xmlNode *parent, const char *name);
/* malloc'd text content of n, white space around it trimmed when trim;
 * NULL on ENOMEM. */
char *boinc_xml_text(xmlNode *n, int trim);
/* Child `name` of parent as a number: 1 found and valid, 0 absent, -1 not
 * a number, -2 ENOMEM. */
int boinc_xml_child_long(xmlNode *parent, const char *name, long *out);
int boinc_xml_child_double(xmlNode *parent, const char *name, double *out);
/* A boinc_xml_child_long/_double result as an error for field name of
 * rpc's reply (absence is one only when required): BOINC_OK or the code. */
int boinc_xml_field_error(int rc, const char *rpc, const char *name,
                          int required, boinc_error *err);

#endif
