/*
 * testpoint.c - test-only hooks (see testpoint.h): SIGKILL at a named
 * point, a one-shot injected fault (allocation faults included), and the
 * scaled pause clock.
 */
#include "base/testpoint.h"

#include "base/log.h"
#include "base/num.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* One armed point: a name and the hit that fires. */
typedef struct {
    char *name;                /* NULL = not armed */
    long nth;                  /* fire on the nth hit */
    long hits;
} armed_point;

static pthread_once_t tp_once = PTHREAD_ONCE_INIT;
static armed_point crash_at = { NULL, 1, 0 };
static armed_point fault_at = { NULL, 1, 0 };
static double time_scale = 1.0;
static pthread_mutex_t tp_mu = PTHREAD_MUTEX_INITIALIZER;

static void arm(armed_point *p, const char *var)
{
    const char *v = getenv(var);
    if (v == NULL || *v == '\0' || (p->name = strdup(v)) == NULL)
        return;
    char *colon = strchr(p->name, ':');
    if (colon != NULL) {
        *colon = '\0';
        long n;
        p->nth = num_parse_long(colon + 1, 1, LONG_MAX, &n) == 0 ? n : 1;
    }
}

static void tp_init(void)
{
    arm(&crash_at, "BOINC_GAHP_TEST_CRASH_AT");
    arm(&fault_at, "BOINC_GAHP_TEST_FAULT_AT");

    const char *v = getenv("BOINC_GAHP_TEST_TIME_SCALE");
    if (v != NULL && *v != '\0') {
        double s;
        /* Only a scale-down is honoured: the variable can make the
         * server wait less, never longer than designed. */
        if (num_parse_double(v, &s) == 0 && s > 0.0 && s <= 1.0)
            time_scale = s;
    }
}

/* What follows point in the armed name ("", ".subject", ...), or NULL
 * when the armed name does not start with point. */
static const char *after_point(const char *armed, const char *point)
{
    size_t n = strlen(point);
    return strncmp(armed, point, n) == 0 ? armed + n : NULL;
}

/* Does the armed name equal point, or point "." subject? */
static int names(const char *armed, const char *point, const char *subject)
{
    const char *rest = after_point(armed, point);
    if (rest == NULL)
        return 0;
    if (subject == NULL)
        return *rest == '\0';
    return *rest == '.' && strcmp(rest + 1, subject) == 0;
}

/* 1 when this hit of the point is the armed one. */
static int hit(armed_point *p, const char *point, const char *subject)
{
    pthread_once(&tp_once, tp_init);
    if (p->name == NULL || !names(p->name, point, subject))
        return 0;
    pthread_mutex_lock(&tp_mu);
    long n = ++p->hits;
    pthread_mutex_unlock(&tp_mu);
    return n == p->nth;
}

void testpoint(const char *name)
{
    if (hit(&crash_at, name, NULL)) {
        log_warn("test crash point %s reached: SIGKILL", name);
        kill(getpid(), SIGKILL);
        pause();
    }
}

int testfault(const char *point, const char *subject)
{
    if (!hit(&fault_at, point, subject))
        return 0;
    log_warn("test fault %s.%s injected", point, subject ? subject : "");
    return 1;
}

/* The sweeps (doc/testing.md) learn from a run armed past the end how
 * many allocations a workload makes, and choose their Ns from it. */
void testfault_report(void)
{
    pthread_once(&tp_once, tp_init);
    if (fault_at.name == NULL)
        return;
    pthread_mutex_lock(&tp_mu);
    long hits = fault_at.hits;
    pthread_mutex_unlock(&tp_mu);
    log_info("test fault point %s reached %ld times", fault_at.name, hits);
}

int testfault_armed(const char *point)
{
    pthread_once(&tp_once, tp_init);
    if (fault_at.name == NULL)
        return 0;
    const char *rest = after_point(fault_at.name, point);
    return rest != NULL && (*rest == '\0' || *rest == '.');
}

int testfault_alloc(const char *library)
{
    /* the second test only runs when the first did not count this hit */
    return testfault("alloc", NULL) || testfault("alloc", library);
}

double test_time_scale(void)
{
    pthread_once(&tp_once, tp_init);
    return time_scale;
}

void pause_ms(long ms)
{
    pthread_once(&tp_once, tp_init);
    double scaled = (double)ms * time_scale;
    if (scaled < 0)
        return;
    struct timespec ts = { (time_t)(scaled / 1000.0),
                           (long)((long long)scaled % 1000) * 1000000L };
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}
