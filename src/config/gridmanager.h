/*
 * gridmanager.h - which HTCondor grid manager started this process, so that
 * several grid managers of one user (GRIDMANAGER_SELECTION_EXPR) each get a
 * journal of their own, and find it again when that grid manager restarts.
 *
 * HTCondor's schedd starts one condor_gridmanager per user, or, with
 * GRIDMANAGER_SELECTION_EXPR set, one per user and value of that expression;
 * it passes the value as "-A <value>" on the grid manager's command line
 * (condor_schedd.V6/grid_universe.cpp in HTCondor 9.0).  The grid manager
 * starts its BOINC GAHP directly or through a wrapper script, and passes
 * nothing of the value on: we read it from the ancestor's command line in
 * /proc.  Linux only; elsewhere, or under no grid manager, there is no value.
 *
 * Interface:
 *   gridmanager_selection_value()  the "-A" value of the nearest
 *                                  condor_gridmanager ancestor, or NULL
 *   gridmanager_journal_suffix()   that value made safe for a file name
 */
#ifndef BOINC_GAHP_GRIDMANAGER_H
#define BOINC_GAHP_GRIDMANAGER_H

/* How many ancestors are looked at (the GAHP, a wrapper, a shell...). */
#define GRIDMANAGER_MAX_DEPTH 6

/* The selection value of the nearest ancestor whose argv[0] is
 * condor_gridmanager (any directory), looking at most GRIDMANAGER_MAX_DEPTH
 * parents up from getppid(); malloc'd, or NULL when there is none (no such
 * ancestor, no "-A", an empty value, /proc unreadable, out of memory). */
char *gridmanager_selection_value(void);

/* The same search starting at process pid (tests and the crash explorer
 * use it with a process of their own); pid <= 1 gives NULL. */
char *gridmanager_selection_value_of(long pid);

/* A file-name suffix for a selection value: its characters outside
 * [A-Za-z0-9._-] become '_', it is cut at 40 characters, and 8 hex digits
 * of a hash of the whole value follow, so that two values that read alike
 * once cleaned ("a b" and "a_b") never share a journal.  malloc'd or NULL. */
char *gridmanager_journal_suffix(const char *value);

#endif
