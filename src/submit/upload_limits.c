/*
 * upload_limits.c - upload chunks within a server's PHP limits
 * (upload_limits.h, doc/commands.md "Uploads and server limits").
 */
#include "submit/upload_limits.h"

#include "base/files.h"
#include "base/num.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

long long upload_request_bytes(const long long *sizes, size_t n)
{
    long long total = UPLOAD_REQUEST_OVERHEAD;
    for (size_t i = 0; i < n; i++)
        total += sizes[i] + UPLOAD_FILE_OVERHEAD;
    return total;
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
    int rc = files_plan_chunks(with_overhead, n, (size_t)lim->max_files,
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

upload_limit_kind upload_limit_kind_of(const char *msg)
{
    long received;
    char *name = NULL;
    upload_limit_kind kind = upload_limit_classify(msg, &received, &name);
    free(name);
    return kind;
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
