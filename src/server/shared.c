/*
 * shared.c - one server's exec_shared (see shared.h).  Here, above the
 * command layers, because it is made of their parts.
 */
#include "server/shared.h"

#include "blah/blah.h"
#include "fetch/fetch_step.h"
#include "submit/submit_registry.h"

#include <stdlib.h>

exec_shared *shared_new(void)
{
    exec_shared *s = calloc(1, sizeof *s);
    if (s == NULL)
        return NULL;
    atomic_init(&s->detached_runs, 0);
    atomic_init(&s->replay_possible, 0);
    s->submits = submit_registry_new();
    s->claims = file_claims_new();
    s->templates = fetch_templates_cache_new();
    s->blah = blah_state_new();
    if (s->submits == NULL || s->claims == NULL || s->templates == NULL || s->blah == NULL) {
        shared_free(s);
        return NULL;
    }
    return s;
}

void shared_free(exec_shared *s)
{
    if (s == NULL)
        return;
    submit_registry_free(s->submits);
    file_claims_free(s->claims);
    fetch_templates_cache_free(s->templates);
    blah_sched_stop(s->blah);   /* stopped already at a server's shutdown */
    blah_state_free(s->blah);
    free(s);
}
