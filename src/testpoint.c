/*
 * testpoint.c - SIGKILL at a named point when the crash tests ask for it.
 */
#include "testpoint.h"

#include "log.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pthread_once_t tp_once = PTHREAD_ONCE_INIT;
static char *tp_name;          /* NULL = no crash point armed */
static long tp_nth = 1;        /* crash on the nth hit */
static long tp_hits;
static pthread_mutex_t tp_mu = PTHREAD_MUTEX_INITIALIZER;

static void tp_init(void)
{
    const char *v = getenv("BOINC_GAHP_TEST_CRASH_AT");
    if (v == NULL || *v == '\0')
        return;
    tp_name = strdup(v);
    if (tp_name == NULL)
        return;
    char *colon = strchr(tp_name, ':');
    if (colon != NULL) {
        *colon = '\0';
        char *end;
        long n = strtol(colon + 1, &end, 10);
        tp_nth = (*end == '\0' && n > 0) ? n : 1;
    }
}

void testpoint(const char *name)
{
    pthread_once(&tp_once, tp_init);
    if (tp_name == NULL || strcmp(name, tp_name) != 0)
        return;
    pthread_mutex_lock(&tp_mu);
    long hit = ++tp_hits;
    pthread_mutex_unlock(&tp_mu);
    if (hit == tp_nth) {
        log_warn("test crash point %s reached: SIGKILL", name);
        kill(getpid(), SIGKILL);
        pause();
    }
}
