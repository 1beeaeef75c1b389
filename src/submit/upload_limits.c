/*
 * upload_limits.c - upload chunks within a server's PHP limits
 * (submit_files.h, doc/commands.md "Uploads and server limits"): the
 * chunk planning and the recognition of a server's PHP limit refusals.
 * Split from submit_files.c, which uses them.
 */
#include "submit/submit_files.h"

#include "base/num.h"
#include "base/strbuf.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* ==== upload limits =====================================================
 *
 * Upload chunks within a server's PHP limits
 * (submit_files.h, doc/commands.md "Uploads and server limits").
 */

long long upload_request_bytes(const long long *sizes, size_t n)
{
    long long total = UPLOAD_REQUEST_OVERHEAD;
    for (size_t i = 0; i < n; i++)
        total += sizes[i] + UPLOAD_FILE_OVERHEAD;
    return total;
}

int upload_split_chunks(const long long *sizes, size_t n, size_t max_count,
                        long long max_bytes, size_t **chunk_starts,
                        size_t *nchunks)
{
    *chunk_starts = NULL;
    *nchunks = 0;
    if (max_count == 0 || max_bytes <= 0 || (n > 0 && !sizes)) {
        errno = EINVAL;
        return -1;
    }
    if (n == 0)
        return 0;
    /* At most one chunk per file: allocate the worst case once. */
    size_t *starts = malloc(n * sizeof *starts);
    if (!starts)
        return -1;
    size_t count = 0, in_chunk = 0;
    long long bytes = 0;
    for (size_t i = 0; i < n; i++) {
        if (sizes[i] < 0) {
            free(starts);
            errno = EINVAL;
            return -1;
        }
        /* Start a new chunk when this file would break either bound;
         * a file alone in its chunk is always accepted. */
        if (in_chunk == 0 || in_chunk >= max_count || sizes[i] > max_bytes - bytes) {
            starts[count++] = i;
            in_chunk = 0;
            bytes = 0;
        }
        if (sizes[i] > max_bytes) {
            /* Oversized: alone in its chunk; the next file starts a new one. */
            in_chunk = max_count;
            continue;
        }
        in_chunk++;
        bytes += sizes[i];      /* <= max_bytes: no overflow */
    }
    *chunk_starts = starts;
    *nchunks = count;
    return 0;
}

int upload_plan_chunks(const long long *sizes, size_t n, const upload_limits *lim,
                       size_t **starts, size_t *nchunks)
{
    *starts = NULL;
    *nchunks = 0;
    if (lim->max_files < 1 || lim->max_bytes <= UPLOAD_REQUEST_OVERHEAD) {
        errno = EINVAL;
        return -1;
    }
    /* Plan on sizes with each file's overhead added, against the budget
     * left after the request's own overhead. */
    long long *with_overhead = malloc((n ? n : 1) * sizeof *with_overhead);
    if (with_overhead == NULL)
        return -1;
    for (size_t i = 0; i < n; i++)
        with_overhead[i] = sizes[i] + UPLOAD_FILE_OVERHEAD;
    int rc = upload_split_chunks(with_overhead, n, (size_t)lim->max_files,
                                 lim->max_bytes - UPLOAD_REQUEST_OVERHEAD, starts, nchunks);
    free(with_overhead);
    return rc;
}

static const char COUNT_PREFIX[] = "# of uploaded files (";
static const char POST_PREFIX[] = "can't parse request message:";
static const char SIZE_MARK[] = " upload failed because: ";

upload_limit_kind upload_limit_classify(const char *msg, long *received, char **file_name)
{
    *received = 0;
    *file_name = NULL;
    if (msg == NULL)
        return UPLOAD_LIMIT_NONE;
    const char *p = strstr(msg, COUNT_PREFIX);
    if (p != NULL && strstr(p, "doesn't agree with request") != NULL) {
        const char *num = p + strlen(COUNT_PREFIX), *close = strchr(num, ')');
        long v;
        if (close != NULL && num_parse_long_blanks(num, (size_t)(close - num), 1, LONG_MAX,
                                                   &v) == 0)
            *received = v;
        return UPLOAD_LIMIT_FILES;
    }
    p = strstr(msg, POST_PREFIX);
    if (p != NULL) {
        /* PHP discarded the whole body: no request text after the colon
         * (an unparseable request of ours would be quoted there). */
        p += strlen(POST_PREFIX);
        while (*p == ' ')
            p++;
        return *p == '\0' ? UPLOAD_LIMIT_POST : UPLOAD_LIMIT_NONE;
    }
    p = strstr(msg, SIZE_MARK);
    if (p != NULL && strstr(p, "upload_max_filesize") != NULL) {
        /* the name is the last word before the mark */
        const char *start = p;
        while (start > msg && start[-1] != ' ' && start[-1] != ':')
            start--;
        *file_name = strndup(start, (size_t)(p - start));
        return UPLOAD_LIMIT_FILESIZE;
    }
    return UPLOAD_LIMIT_NONE;
}

int upload_limits_shrink(upload_limits *lim, upload_limit_kind kind, size_t nfiles,
                         long long chunk_bytes, long received)
{
    if (nfiles <= 1)
        return -1;
    if (kind == UPLOAD_LIMIT_FILES) {
        long half = (long)(nfiles / 2);
        long files = (received > 0 && (size_t)received < nfiles) ? received : half;
        if (files < 1)
            files = 1;
        if (files < lim->max_files)
            lim->max_files = files;
        return 0;
    }
    if (kind == UPLOAD_LIMIT_POST) {
        long long half = chunk_bytes / 2;
        if (half <= UPLOAD_REQUEST_OVERHEAD)
            half = UPLOAD_REQUEST_OVERHEAD + 1;
        /* The next plan packs at most half the failed request's bytes, so
         * chunks shrink until one file is alone (then it is too large). */
        if (half < lim->max_bytes)
            lim->max_bytes = half;
        return 0;
    }
    return -1;
}

void upload_limits_first_refusal(upload_limits *lim, upload_limit_kind kind, long received)
{
    if (kind == UPLOAD_LIMIT_FILES && received > 0) {
        if (received < lim->max_files)
            lim->max_files = received;      /* never more than the server said */
    } else if (lim->max_files > UPLOAD_DEFAULT_FILES)
        lim->max_files = UPLOAD_DEFAULT_FILES;
    if (lim->max_bytes > UPLOAD_DEFAULT_BYTES)
        lim->max_bytes = UPLOAD_DEFAULT_BYTES;
}

int upload_limits_probe(const upload_limits *lim, upload_limits *probe)
{
    *probe = *lim;
    /* Only the bytes are capped: a file count above a stock server's is
     * exactly what the probe learns, and costs no more than the bytes. */
    if (probe->max_bytes > UPLOAD_DEFAULT_BYTES)
        probe->max_bytes = UPLOAD_DEFAULT_BYTES;
    return probe->max_bytes != lim->max_bytes || lim->max_files > UPLOAD_DEFAULT_FILES;
}

const char *upload_limit_setting(upload_limit_kind kind)
{
    switch (kind) {
    case UPLOAD_LIMIT_FILES: return "max_file_uploads";
    case UPLOAD_LIMIT_POST: return "post_max_size";
    case UPLOAD_LIMIT_FILESIZE: return "upload_max_filesize";
    default: return "";
    }
}

const char *upload_unreadable_path(const char *const *paths, size_t n, const char *msg)
{
    const char *best = NULL;
    for (size_t i = 0; msg != NULL && i < n; i++) {
        size_t len = strlen(paths[i]);
        for (const char *p = strstr(msg, "input file "); p != NULL;
             p = strstr(p + 1, "input file ")) {
            const char *at = p + strlen("input file ");
            /* the path whole: followed by ':' or ' ', not by more of a name */
            if (strncmp(at, paths[i], len) == 0 && (at[len] == ':' || at[len] == ' ') &&
                (best == NULL || len > strlen(best)))
                best = paths[i];
        }
    }
    return best;
}

int upload_plan_round(const long long *sizes, size_t n, const upload_limits *lim, int learned,
                      size_t **starts, size_t *nchunks, size_t *nprobe)
{
    upload_limits probe;
    *nprobe = 0;
    if (learned || n == 0 || !upload_limits_probe(lim, &probe))
        return upload_plan_chunks(sizes, n, lim, starts, nchunks);
    size_t *first = NULL, nfirst = 0, *rest = NULL, nrest = 0;
    if (upload_plan_chunks(sizes, n, &probe, &first, &nfirst) != 0)
        return -1;
    size_t head = nfirst > 1 ? first[1] : n;
    free(first);
    if (upload_plan_chunks(sizes + head, n - head, lim, &rest, &nrest) != 0)
        return -1;
    *starts = malloc((nrest + 1) * sizeof **starts);
    if (*starts == NULL) {
        free(rest);
        return -1;
    }
    (*starts)[0] = 0;
    for (size_t i = 0; i < nrest; i++)
        (*starts)[i + 1] = head + rest[i];
    free(rest);
    *nchunks = nrest + 1;
    *nprobe = 1;
    return 0;
}

void upload_too_large_texts(const char *phys, const char *path, long long size,
                            const char *server_msg, upload_limit_kind kind, char **detail,
                            char **why)
{
    /* A file PHP threw away with the whole POST must also pass
     * upload_max_filesize, usually the smaller limit: name both, or the
     * job is held again after post_max_size alone is raised (issue 28). */
    const char *also = kind == UPLOAD_LIMIT_POST
                       ? " and upload_max_filesize (each must allow a file this large)" : "";
    *detail = str_printf("input %s (%s) is %lld bytes, more than the server accepts in one "
                         "upload (%s); raise %s%s in the project's php.ini", phys, path, size,
                         server_msg ? server_msg : "", upload_limit_setting(kind), also);
    /* the input's own problem, short enough for a hold reason (the server's
     * text, which may be long, stays in the batch's error) */
    *why = str_printf("input file %s is %lld bytes, more than the BOINC server takes in one "
                      "upload (its php.ini %s%s)", path, size, upload_limit_setting(kind),
                      kind == UPLOAD_LIMIT_POST ? " and upload_max_filesize" : "");
}
