/*
 * job_args.h - the argument rule for BOINC_SUBMIT: which job arguments a
 * real BOINC server can carry, and the command_line string sent for them.
 *
 * A real server hands command_line, unescaped, to create_work's stdin as
 * part of one line `--wu_name NAME --command_line "X" FILE...`, which is
 * split on white space with '...' and "..." grouping and no escapes, and
 * create_work puts X into an SQL insert without escaping it, where MariaDB's
 * default sql_mode decodes backslash escapes (\n, \b, \t, \\ ...) and drops
 * a \ before any other character: the job would run with arguments nobody
 * submitted, and a job name with a \ would be stored as another name.
 * Doubling each \ is no cure (a server in NO_BACKSLASH_ESCAPES mode would
 * keep both).  The volunteer client splits X again into the app's argv.
 * So an argument (and a job name) travels verbatim only if it is not empty
 * and holds no white space, no quote (' or "), no backslash, no line break
 * and no other control character (XML 1.0 cannot carry those), and is
 * strict UTF-8 without U+FFFE or U+FFFF (submit_batch's request is XML: a
 * server's parser refuses anything else and fails the whole batch with
 * "can't parse request message"); everything else, including $ and `,
 * arrives as sent.  The whole line must also fit
 * create_work's line buffer and its 100-slot token array.  doc/commands.md gives the rule to users.
 */
#ifndef BOINC_GAHP_JOB_ARGS_H
#define BOINC_GAHP_JOB_ARGS_H

#include <stddef.h>

/* create_work reads each stdin line with fgets() into char[4096] and takes
 * strlen(buf) == 4095 for "buffer too small" (even when the 4,095th byte
 * is the newline): a line, newline included, must have at most 4,094
 * bytes (seen on a real BOINC 8.3 server). */
#define JOB_LINE_MAX_BYTES  4094
/* create_work splits the line into char *argv[100], NULL-terminated by
 * BOINC's parse_command_line: at most 99 tokens. */
#define JOB_LINE_MAX_TOKENS 99

/*
 * Length in bytes and token count of the line submit_rpc_handler.php writes
 * for a job with these arguments and physical input names (a leading space
 * and the newline included, as the handler writes them).
 */
void job_line_measure(const char *job_name, const char *const *args, size_t nargs,
                      const char *const *phys_names, size_t ninputs,
                      size_t *bytes, size_t *tokens);

/*
 * Check every argument and the line limits of one job and build its
 * command_line (arguments joined by single spaces, "" for none).
 * Returns 0 with *command_line malloc'd; 1 when the job breaks the rule,
 * with *why a malloc'd message naming the job and the argument; -1 when
 * memory ran out.
 */
int job_args_command_line(const char *job_name, const char *const *args, size_t nargs,
                          const char *const *phys_names, size_t ninputs,
                          char **command_line, char **why);

/* The same, the messages naming label (e.g. "the job") instead of "job
 * <job_name>": for a job whose BOINC name is not made yet (BLAH), where
 * job_name only stands in for its length. */
int job_args_command_line_as(const char *job_name, const char *label,
                             const char *const *args, size_t nargs,
                             const char *const *phys_names, size_t ninputs,
                             char **command_line, char **why);

#endif
