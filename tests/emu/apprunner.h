/*
 * apprunner.h - the helper process that forks the hosts' app runs (see
 * apprunner.c for why it exists).
 */
#ifndef BOINC_EMU_APPRUNNER_H
#define BOINC_EMU_APPRUNNER_H

#include <stdint.h>

typedef struct {
    uint32_t id;        /* the caller's tag of the run */
    int status;         /* wait status */
    double cpu;         /* user + system seconds (rusage) */
    double elapsed;     /* wall seconds from fork to exit */
} run_done;

/* Fork the helper; call before threads or the database exist. 0 or -1. */
int apprunner_start(void);
int apprunner_available(void);
/* Start argv (app mode arguments) with stderr to errpath. 0 or -1. */
int apprunner_submit(uint32_t id, const char *errpath, char *const argv[]);
/* Block until some run ends. 0 or -1 (helper gone). */
int apprunner_wait(run_done *out);
void apprunner_stop(void);

#endif
