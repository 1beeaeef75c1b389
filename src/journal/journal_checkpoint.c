/*
 * journal_checkpoint.c - WAL checkpoints off the request and submit paths.
 *
 * SQLite's automatic checkpoint runs inside the commit that crosses its
 * threshold (1,000 WAL pages): that commit's thread then copies the WAL
 * into the database file and fsyncs it before it returns.  In a server
 * that is a worker or the completion committer, so a request's result
 * waited behind a checkpoint of other requests' pages (84 ms for a
 * 10,000-job submit's pages, seen with strace).  Here every connection of
 * the process has the automatic checkpoint replaced by a WAL hook that
 * only wakes one checkpointer thread (a task of the process's pool,
 * base/tasks.h), which runs PASSIVE checkpoints on
 * its own connection: they never block a writer or a reader, and the WAL
 * is restarted from its beginning by the next writer once a checkpoint
 * completed, as before.  Durability is unchanged: a commit is durable in
 * the WAL (synchronous=FULL) whether or not it was checkpointed.
 *
 * The hook also records the WAL size after every commit, for the
 * completion committer's journal_checkpoint_if_due (journal.h): it
 * checkpoints a smaller WAL (256 frames) itself, just before its own
 * commit, so that its commit and not an accept restarts the WAL, and
 * accepts overwrite WAL blocks instead of appending (an appending
 * fdatasync also commits ext4's journal).  The thread is the bound for
 * everything else: a submit's large commits never wait for a checkpoint.
 *
 * Interface (journal_internal.h): journal_ckpt_start(path) once for the
 * process's primary connection, journal_ckpt_attach(db) for every
 * connection, journal_ckpt_stop() before the primary closes.  Without a
 * running checkpointer (not started, failed to start, or stopped), the
 * hook checkpoints inline at 1,000 frames, which is SQLite's own
 * behaviour.
 */
#include "journal/journal_internal.h"

#include "base/log.h"
#include "base/num.h"
#include "base/tasks.h"

#include <pthread.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* SQLite's default automatic checkpoint threshold, in WAL frames. */
#define CKPT_FRAMES 1000

/*
 * The threshold, lowered for tests only by BOINC_GAHP_TEST_CKPT_FRAMES
 * (1..1000; doc/testing.md): the crash-state explorer's workloads write a
 * few dozen frames, never the 1,000 that wake the checkpointer, so its
 * connection's durability went unchecked (issue 29 #2).
 */
static int ckpt_frames = CKPT_FRAMES;
static pthread_once_t frames_once = PTHREAD_ONCE_INIT;

static void frames_setup(void)
{
    const char *v = getenv("BOINC_GAHP_TEST_CKPT_FRAMES");
    if (v == NULL || *v == '\0')
        return;
    long n;
    if (num_parse_long(v, 1, CKPT_FRAMES, &n) == 0)
        ckpt_frames = (int)n;
}

/* WAL size after the last commit of any connection of this process (the
 * process has one journal): a hint for journal_checkpoint_if_due. */
static atomic_int wal_frames;

static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    task *task;
    sqlite3 *db;            /* the checkpointer's own connection */
    const char *file;       /* its database file, as SQLite names it */
    int running;            /* the thread is there to wake */
    int pending;            /* a commit crossed the threshold */
    int stopping;
} ckpt = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL, NULL, NULL, 0, 0, 0 };

/*
 * One PASSIVE checkpoint of db; a complete one clears the WAL-size hint.
 * Incomplete (a reader's snapshot still needs old frames) or busy
 * (another connection checkpoints): the next commit tries again.
 */
static void checkpoint_passive(sqlite3 *db, const char *schema)
{
    int logged = 0, copied = 0;
    int rc = sqlite3_wal_checkpoint_v2(db, schema, SQLITE_CHECKPOINT_PASSIVE, &logged, &copied);
    if (rc == SQLITE_OK && copied == logged)
        atomic_store(&wal_frames, 0);
    else if (rc != SQLITE_OK && rc != SQLITE_BUSY)
        log_warn("journal checkpoint: %s", sqlite3_errmsg(db));
}

static void ckpt_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&ckpt.mu);
    for (;;) {
        while (!ckpt.pending && !ckpt.stopping)
            pthread_cond_wait(&ckpt.cv, &ckpt.mu);
        if (ckpt.stopping)
            break;
        ckpt.pending = 0;
        pthread_mutex_unlock(&ckpt.mu);
        checkpoint_passive(ckpt.db, NULL);
        pthread_mutex_lock(&ckpt.mu);
    }
    pthread_mutex_unlock(&ckpt.mu);
}

static int wal_hook(void *arg, sqlite3 *db, const char *schema, int frames)
{
    (void)arg;
    atomic_store(&wal_frames, frames);
    pthread_once(&frames_once, frames_setup);
    if (frames < ckpt_frames)
        return SQLITE_OK;
    pthread_mutex_lock(&ckpt.mu);
    /* the thread checkpoints one file: another journal of the same
     * process (a test's) checkpoints inline */
    const char *file = sqlite3_db_filename(db, schema);
    int running = ckpt.running && file != NULL && strcmp(file, ckpt.file) == 0;
    if (running) {
        ckpt.pending = 1;
        pthread_cond_signal(&ckpt.cv);
    }
    pthread_mutex_unlock(&ckpt.mu);
    if (!running)
        checkpoint_passive(db, schema);
    return SQLITE_OK;
}

void journal_checkpoint_if_due(journal *j, int frames)
{
    if (atomic_load(&wal_frames) >= frames)
        checkpoint_passive(journal_db(j), NULL);
}

void journal_ckpt_attach(sqlite3 *db)
{
    sqlite3_wal_hook(db, wal_hook, NULL);   /* replaces the automatic checkpoint */
}

void journal_ckpt_start(const char *path)
{
    pthread_mutex_lock(&ckpt.mu);
    int already = ckpt.running;
    pthread_mutex_unlock(&ckpt.mu);
    if (already)
        return;
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) !=
        SQLITE_OK) {
        log_warn("journal checkpointer: cannot open %s: %s; checkpoints stay inline", path,
                 db ? sqlite3_errmsg(db) : "out of memory");
        sqlite3_close(db);
        return;
    }
    sqlite3_busy_timeout(db, 1000);
    /* A connection learns that the file is in WAL mode from its first
     * read; until then its checkpoints do nothing (log and checkpointed
     * frame counts -1).  Read the schema once, here. */
    ckpt.file = sqlite3_db_filename(db, "main");
    if (ckpt.file == NULL ||
        sqlite3_exec(db, "SELECT count(*) FROM sqlite_master", NULL, NULL, NULL) != SQLITE_OK) {
        log_warn("journal checkpointer: cannot read %s: %s; checkpoints stay inline", path,
                 sqlite3_errmsg(db));
        sqlite3_close(db);
        ckpt.file = NULL;
        return;
    }
    ckpt.db = db;
    ckpt.stopping = 0;
    ckpt.pending = 0;
    if ((ckpt.task = task_start(ckpt_main, NULL)) == NULL) {
        log_warn("journal checkpointer: no thread; checkpoints stay inline");
        sqlite3_close(db);
        ckpt.db = NULL;
        ckpt.file = NULL;
        return;
    }
    pthread_mutex_lock(&ckpt.mu);
    ckpt.running = 1;
    pthread_mutex_unlock(&ckpt.mu);
}

void journal_ckpt_stop(void)
{
    pthread_mutex_lock(&ckpt.mu);
    int running = ckpt.running;
    ckpt.running = 0;
    ckpt.stopping = 1;
    pthread_cond_signal(&ckpt.cv);
    pthread_mutex_unlock(&ckpt.mu);
    if (!running)
        return;
    task_join(ckpt.task);
    ckpt.task = NULL;
    sqlite3_close(ckpt.db);
    ckpt.db = NULL;
    ckpt.file = NULL;
}
