/*
 * boinc_templates_job.c - get_templates looked up by a job's name
 * (<job_name> instead of <app_name>), which BOINC_FETCH_OUTPUT needs: it
 * only knows the job, and output file numbers come from the output
 * template of the job's app.
 *
 * Kept in its own file (owned by the commands developer) and built only
 * from the internal helpers of boinc_internal.h, so the other boinc*.c
 * files stay untouched.  Same checks, retry policy and error handling as
 * boinc_get_templates() (get_templates is safe to repeat).
 */
#include "boinc.h"

#include "boinc_internal.h"

#include <string.h>
#include <strings.h>

/* <get_templates><authenticator>..</authenticator><job_name>..</job_name>,
 * every value XML-escaped (the layout of the real-server capture
 * 03_get_templates_by_job.txt). */
static int build_request(strbuf *sb, const char *auth, const char *job)
{
    if (strbuf_puts(sb, "<get_templates>\n<authenticator>") != 0 ||
        strbuf_put_xml_escaped(sb, auth) != 0 ||
        strbuf_puts(sb, "</authenticator>\n<job_name>") != 0 ||
        strbuf_put_xml_escaped(sb, job) != 0 ||
        strbuf_puts(sb, "</job_name>\n</get_templates>\n") != 0)
        return -1;
    return 0;
}

static int check_args(boinc_client *c, const boinc_project *p,
                      const char *job_name, boinc_templates *out,
                      boinc_error *err)
{
    if (c == NULL || p == NULL || p->url == NULL || p->authenticator == NULL)
        return boinc_fail(err, BOINC_E_BADARG, 0,
                          "missing client, project URL or authenticator");
    size_t n = strlen(p->url);
    if (n == 0 || p->url[n - 1] != '/' ||
        (strncasecmp(p->url, "http://", 7) != 0 &&
         strncasecmp(p->url, "https://", 8) != 0))
        return boinc_fail(err, BOINC_E_BADARG, 0,
                          "project URL must be http(s):// and end in '/'");
    if (out == NULL)
        return boinc_fail(err, BOINC_E_BADARG, 0, "missing output");
    if (job_name == NULL || *job_name == '\0')
        return boinc_fail(err, BOINC_E_BADARG, 0, "empty job name");
    return BOINC_OK;
}

int boinc_get_templates_for_job(boinc_client *c, const boinc_project *p,
                                const char *job_name, boinc_templates *out,
                                boinc_error *err)
{
    if (err == NULL)
        return BOINC_E_BADARG;
    boinc_error_clear(err);
    if (out != NULL)
        memset(out, 0, sizeof *out);
    int rc = check_args(c, p, job_name, out, err);
    if (rc != BOINC_OK)
        return rc;

    strbuf req = STRBUF_INIT;
    strbuf reply = STRBUF_INIT;
    if (build_request(&req, p->authenticator, job_name) != 0)
        rc = boinc_fail(err, BOINC_E_NOMEM, 0, "out of memory");
    else
        rc = boinc_http_post(c, p->url, "submit_rpc_handler.php",
                             "get_templates", strbuf_str(&req), NULL, 0,
                             BOINC_RETRY, &reply, err);
    if (rc == BOINC_OK)
        rc = boinc_parse_templates(strbuf_str(&reply), reply.len, out, err);
    if (rc == BOINC_OK) {
        boinc_error_clear(err);
    } else {
        boinc_templates_free(out);
        /* Last line of defence, as in boinc.c: no message may carry the
         * authenticator. */
        boinc_scrub_secret(err, p->authenticator);
    }
    strbuf_free(&req);
    strbuf_free(&reply);
    return rc;
}
