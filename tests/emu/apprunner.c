/*
 * apprunner.c - a small helper process that starts the hosts' app runs.
 *
 * Forking the emulator itself for every run copies the page tables of a
 * process with a database cache, HTTP threads and (under ASan) big shadow
 * mappings; that dominated the cost of a 10,000-job batch.  So at start-up,
 * before the database is opened or any thread exists, boinc_emu forks this
 * helper; it stays small, and forks a child per run that executes the app
 * code (run_app_main) and exits.  The server sends requests over a
 * socketpair and reads back each run's wait status and rusage.
 *
 * Wire format (both directions, native byte order, same machine):
 *   request:  uint32 id, uint32 len, then len bytes: the stderr path, then
 *             the app's argv, each NUL-terminated
 *   response: struct run_done
 * When the server goes away (EOF), the helper exits.
 */
#include "emu.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "apprunner.h"

static int runner_fd = -1;
static pid_t runner_pid = -1;

static int write_all(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t w = write(fd, p, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

static int read_all(int fd, void *buf, size_t len)
{
    char *p = buf;
    while (len > 0) {
        ssize_t r = read(fd, p, len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        p += r;
        len -= (size_t)r;
    }
    return 0;
}

/* ---- helper side ---- */

typedef struct {
    pid_t pid;
    uint32_t id;
    double t0;
} child_slot;

static void child_run(char *payload, uint32_t len)
{
    /* payload: errpath \0 argv0 \0 argv1 \0 ... */
    int n = 0;
    for (uint32_t i = 0; i < len; i++)
        if (payload[i] == '\0')
            n++;
    char **argv = calloc((size_t)n + 1, sizeof *argv);
    if (argv == NULL)
        _exit(255);
    int argc = 0;
    char *errpath = payload;
    char *p = payload + strlen(payload) + 1;
    while (p < payload + len && argc < n) {
        argv[argc++] = p;
        p += strlen(p) + 1;
    }
    argv[argc] = NULL;
    int in = open("/dev/null", O_RDONLY), out = open("/dev/null", O_WRONLY);
    int err = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (in < 0 || out < 0 || err < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
        _exit(255);
    _exit(run_app_main(argc, argv));
}

static void report(int fd, child_slot *c, int status, const struct rusage *ru)
{
    run_done d;
    memset(&d, 0, sizeof d);
    d.id = c->id;
    d.status = status;
    d.cpu = (double)ru->ru_utime.tv_sec + ru->ru_utime.tv_usec / 1e6 +
            (double)ru->ru_stime.tv_sec + ru->ru_stime.tv_usec / 1e6;
    d.elapsed = wall_now() - c->t0;
    if (write_all(fd, &d, sizeof d) != 0)
        _exit(0);       /* server gone */
}

static void helper_main(int fd)
{
    child_slot kids[128];
    int nkids = 0;
    for (;;) {
        /* reap finished runs */
        int status;
        struct rusage ru;
        pid_t pid;
        while (nkids > 0 && (pid = wait4(-1, &status, WNOHANG, &ru)) > 0) {
            for (int i = 0; i < nkids; i++) {
                if (kids[i].pid == pid) {
                    report(fd, &kids[i], status, &ru);
                    kids[i] = kids[--nkids];
                    break;
                }
            }
        }
        /* wait for a request (briefly while children run) */
        struct pollfd pfd = { fd, POLLIN, 0 };
        int rc = poll(&pfd, 1, nkids > 0 ? 2 : -1);
        if (rc < 0 && errno != EINTR)
            _exit(1);
        if (rc <= 0 || !(pfd.revents & (POLLIN | POLLHUP)))
            continue;
        uint32_t hdr[2];
        if (read_all(fd, hdr, sizeof hdr) != 0)
            _exit(0);   /* EOF: the server is gone */
        if (hdr[1] == 0 || hdr[1] > (1u << 20))
            _exit(1);
        char *payload = malloc((size_t)hdr[1] + 1);
        if (payload == NULL || read_all(fd, payload, hdr[1]) != 0)
            _exit(1);
        payload[hdr[1]] = '\0';
        if (nkids == (int)(sizeof kids / sizeof kids[0])) {
            /* cannot happen: the server keeps at most 64 in flight */
            _exit(1);
        }
        double t0 = wall_now();
        pid = fork();
        if (pid == 0)
            child_run(payload, hdr[1]);
        free(payload);
        if (pid < 0) {
            /* report a failed start as exit status 255 */
            child_slot c = { 0, hdr[0], t0 };
            struct rusage none;
            memset(&none, 0, sizeof none);
            report(fd, &c, 255 << 8, &none);
            continue;
        }
        kids[nkids].pid = pid;
        kids[nkids].id = hdr[0];
        kids[nkids].t0 = t0;
        nkids++;
    }
}

int apprunner_start(void)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        return -1;
    pid_t pid = fork();
    if (pid < 0) {
        close(sv[0]);
        close(sv[1]);
        return -1;
    }
    if (pid == 0) {
        close(sv[0]);
        /* the helper ends with the server (EOF), not with its signals */
        signal(SIGINT, SIG_IGN);
        signal(SIGTERM, SIG_IGN);
        signal(SIGPIPE, SIG_IGN);
        helper_main(sv[1]);
        _exit(0);
    }
    close(sv[1]);
    runner_fd = sv[0];
    runner_pid = pid;
    return 0;
}

/* The helper died: later runs fork the server directly. */
static void helper_lost(void)
{
    if (runner_fd >= 0) {
        close(runner_fd);
        runner_fd = -1;
    }
    if (runner_pid > 0) {
        int st;
        waitpid(runner_pid, &st, WNOHANG);
        runner_pid = -1;
    }
}

int apprunner_available(void)
{
    return runner_fd >= 0;
}

int apprunner_submit(uint32_t id, const char *errpath, char *const argv[])
{
    strbuf sb = STRBUF_INIT;
    strbuf_append(&sb, errpath, strlen(errpath) + 1);
    for (int i = 0; argv[i]; i++)
        strbuf_append(&sb, argv[i], strlen(argv[i]) + 1);
    uint32_t hdr[2] = { id, (uint32_t)sb.len };
    int rc = (write_all(runner_fd, hdr, sizeof hdr) == 0 &&
              write_all(runner_fd, sb.data, sb.len) == 0) ? 0 : -1;
    strbuf_free(&sb);
    if (rc != 0)
        helper_lost();
    return rc;
}

int apprunner_wait(run_done *out)
{
    if (runner_fd < 0 || read_all(runner_fd, out, sizeof *out) != 0) {
        helper_lost();
        return -1;
    }
    return 0;
}

void apprunner_stop(void)
{
    if (runner_fd >= 0) {
        close(runner_fd);
        runner_fd = -1;
    }
    if (runner_pid > 0) {
        int st;
        while (waitpid(runner_pid, &st, 0) < 0 && errno == EINTR)
            ;
        runner_pid = -1;
    }
}
