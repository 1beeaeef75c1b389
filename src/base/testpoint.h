/*
 * testpoint.h - test-only hooks: deterministic crash injection, fault
 * injection, and the one clock every deliberate pause goes through.
 *
 * testpoint("submit.create_sent") kills the process with SIGKILL when the
 * environment variable BOINC_GAHP_TEST_CRASH_AT names that point
 * ("NAME" = first time it is reached, "NAME:N" = the N-th time).
 *
 * testfault("reply_nomem", "create_batch") returns 1 (once) when
 * BOINC_GAHP_TEST_FAULT_AT names that point ("reply_nomem.create_batch"),
 * with the same NAME[:N] rule;
 * the caller then behaves as if the fault happened.
 *
 * Allocation faults: BOINC_GAHP_TEST_FAULT_AT=alloc[:N] fails the N-th
 * allocation any of the libraries makes (SQLite, libcurl, libxml2);
 * alloc.sqlite[:N], alloc.curl[:N], alloc.xml[:N] count one library's.
 * Each library's module installs its allocator hook only when
 * testfault_armed("alloc") (so an unarmed server runs the libraries'
 * own allocators); the hook asks testfault_alloc(library) before every
 * allocation.  testfault_report() logs how often the armed fault's point
 * was reached (the server calls it as it stops; the sweeps size
 * themselves by it).
 *
 * pause_ms() is the only way the server waits on purpose (settle pauses
 * before asking the server again, retry back-off): the delay is scaled by
 * BOINC_GAHP_TEST_TIME_SCALE (a number in (0, 1], default 1) so the test
 * suite does not sleep for real.
 *
 * The variables are for the test suite only (doc/testing.md); unset, a
 * testpoint costs one pointer comparison.
 */
#ifndef BOINC_GAHP_TESTPOINT_H
#define BOINC_GAHP_TESTPOINT_H

void testpoint(const char *name);
int testfault(const char *point, const char *subject);
int testfault_armed(const char *point);
int testfault_alloc(const char *library);
void testfault_report(void);
void pause_ms(long ms);
/* The factor pause_ms applies (1 unless the test clock is set): designed
 * durations that are not pauses (the journal's retention) scale with it. */
double test_time_scale(void);

#endif
