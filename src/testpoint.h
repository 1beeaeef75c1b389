/*
 * testpoint.h - deterministic crash injection for the crash tests.
 *
 * testpoint("submit.create_sent") kills the process with SIGKILL when the
 * environment variable BOINC_GAHP_TEST_CRASH_AT names that point
 * ("NAME" = first time it is reached, "NAME:N" = the N-th time).  The
 * variable is for the test suite only (doc/testing.md); unset, a testpoint
 * costs one pointer comparison.
 */
#ifndef BOINC_GAHP_TESTPOINT_H
#define BOINC_GAHP_TESTPOINT_H

void testpoint(const char *name);

#endif
