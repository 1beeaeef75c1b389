/*
 * tracer.c - the -finstrument-functions hooks of a traced build
 * (tools/path_trace/README.md): each thread writes "E <address>" and
 * "X <address>" lines for every function it enters and leaves to
 * $BOINC_TRACE_DIR/trace.<tid>.  A measuring tool, never linked into the
 * server proper.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/syscall.h>
static __thread FILE *tf;
static __thread int busy;
__attribute__((no_instrument_function)) static FILE *out(void)
{
    if (tf == NULL) {
        const char *d = getenv("BOINC_TRACE_DIR");
        if (d == NULL) return NULL;
        char *p = NULL;
        if (asprintf(&p, "%s/trace.%ld", d, (long)syscall(SYS_gettid)) < 0)
            return NULL;
        tf = fopen(p, "w");
        free(p);
    }
    return tf;
}
/* One line per event; busy keeps the stdio calls from tracing themselves. */
__attribute__((no_instrument_function)) static void record(char kind, void *fn)
{
    if (busy) return;
    busy = 1;
    FILE *f = out();
    if (f) { fprintf(f, "%c %lx\n", kind, (unsigned long)fn); fflush(f); }
    busy = 0;
}

__attribute__((no_instrument_function)) void __cyg_profile_func_enter(void *fn, void *site)
{
    (void)site;
    record('E', fn);
}

__attribute__((no_instrument_function)) void __cyg_profile_func_exit(void *fn, void *site)
{
    (void)site;
    record('X', fn);
}
