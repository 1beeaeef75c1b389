/*
 * apps.c - the emulated project's applications: their replication
 * parameters and templates (built-in defaults, optional XML --config), and
 * the apps themselves, run by simulated hosts as separate processes
 * ("boinc_emu --run-app KIND --slot DIR ...", see run_app_main()).
 */
#include "emu.h"

#include <errno.h>
#include <stdarg.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zip.h>

#include "base/log.h"

static void app_make_templates(emu_app *a)
{
    strbuf in = STRBUF_INIT, out = STRBUF_INIT;
    strbuf_puts(&in, "<input_template>\n");
    for (int i = 0; i < a->ninputs; i++)
        strbuf_printf(&in, "    <file_info>\n        <number>%d</number>\n    </file_info>\n", i);
    strbuf_puts(&in, "    <workunit>\n");
    for (int i = 0; i < a->ninputs; i++)
        strbuf_printf(&in, "        <file_ref>\n            <file_number>%d</file_number>\n"
                      "            <open_name>%s</open_name>\n            <copy_file/>\n"
                      "        </file_ref>\n", i, a->inputs[i]);
    strbuf_printf(&in,
                  "        <target_nresults>%d</target_nresults>\n"
                  "        <min_quorum>%d</min_quorum>\n"
                  "        <max_error_results>%d</max_error_results>\n"
                  "        <max_total_results>%d</max_total_results>\n"
                  "        <max_success_results>%d</max_success_results>\n"
                  "        <rsc_fpops_est>1e9</rsc_fpops_est>\n"
                  "        <rsc_fpops_bound>1e13</rsc_fpops_bound>\n"
                  "        <rsc_memory_bound>1e8</rsc_memory_bound>\n"
                  "        <rsc_disk_bound>1e8</rsc_disk_bound>\n"
                  "        <delay_bound>%.15g</delay_bound>\n"
                  "    </workunit>\n</input_template>\n",
                  a->target_nresults, a->min_quorum, a->max_error_results,
                  a->max_total_results, a->max_success_results, a->delay_bound);
    strbuf_puts(&out, "<output_template>\n");
    for (int i = 0; i < a->noutputs; i++)
        strbuf_printf(&out, "    <file_info>\n        <name><OUTFILE_%d/></name>\n"
                      "        <generated_locally/>\n        <upload_when_present/>\n"
                      "        <max_nbytes>5000000</max_nbytes>\n"
                      "        <url><UPLOAD_URL/></url>\n    </file_info>\n", i);
    strbuf_puts(&out, "    <result>\n");
    for (int i = 0; i < a->noutputs; i++)
        strbuf_printf(&out, "        <file_ref>\n            <file_name><OUTFILE_%d/></file_name>\n"
                      "            <open_name>%s</open_name>\n        </file_ref>\n",
                      i, a->outputs[i]);
    strbuf_puts(&out, "    </result>\n</output_template>\n");
    free(a->in_template);
    free(a->out_template);
    a->in_template = strbuf_detach(&in);
    a->out_template = strbuf_detach(&out);
}

static emu_app *app_slot(const char *name)
{
    for (int i = 0; i < G.napps; i++)
        if (strcmp(G.apps[i].name, name) == 0)
            return &G.apps[i];
    emu_app *n = realloc(G.apps, (size_t)(G.napps + 1) * sizeof *n);
    if (n == NULL)
        abort();
    G.apps = n;
    emu_app *a = &G.apps[G.napps++];
    memset(a, 0, sizeof *a);
    a->name = xstrdup(name);
    return a;
}

static void add_name(char ***list, int *n, const char *name)
{
    char **l = realloc(*list, (size_t)(*n + 1) * sizeof *l);
    if (l == NULL)
        abort();
    l[(*n)++] = xstrdup(name);
    *list = l;
}

static void app_define(const char *name, const char *kind, int quorum, int target,
                       int maxerr, int maxtotal, int maxsucc,
                       const char *ins, const char *outs)
{
    emu_app *a = app_slot(name);
    free(a->kind);
    a->kind = xstrdup(kind);
    a->min_quorum = quorum;
    a->target_nresults = target;
    a->max_error_results = maxerr;
    a->max_total_results = maxtotal;
    a->max_success_results = maxsucc;
    a->delay_bound = 600;
    char *copy = xstrdup(ins), *save = NULL;
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save))
        add_name(&a->inputs, &a->ninputs, t);
    free(copy);
    copy = xstrdup(outs);
    save = NULL;
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save))
        add_name(&a->outputs, &a->noutputs, t);
    free(copy);
    app_make_templates(a);
}

int apps_load_defaults(void)
{
    /* uppercase matches the real test project of the captures exactly. */
    app_define("uppercase", "uppercase", 1, 1, 1, 2, 1, "in", "out");
    app_define("twoinout", "twoinout", 1, 1, 1, 2, 1, "a,b", "sum,log");
    app_define("zipout", "zipout", 1, 1, 1, 2, 1, "in", "out");
    app_define("failer", "failer", 1, 1, 1, 2, 1, "in", "out");
    app_define("quorum2", "uppercase", 2, 2, 3, 6, 4, "in", "out");
    return 0;
}

const emu_app *app_find(const char *name)
{
    for (int i = 0; i < G.napps; i++)
        if (strcmp(G.apps[i].name, name) == 0)
            return &G.apps[i];
    return NULL;
}

static char *node_text(xmlNode *n)
{
    xmlChar *c = xmlNodeGetContent(n);
    char *s = xstrdup(c ? (const char *)c : "");
    xmlFree(c);
    return s;
}

static int cfg_int(xmlNode *n, int *out)
{
    char *s = node_text(n);
    long v;
    int rc = parse_long(s, &v);
    if (rc == 0 && v >= 0 && v < 1000000)
        *out = (int)v;
    else
        rc = -1;
    free(s);
    return rc;
}

static int cfg_app(xmlNode *app_node, const char *path)
{
    char *name = NULL;
    for (xmlNode *c = app_node->children; c; c = c->next)
        if (c->type == XML_ELEMENT_NODE && strcmp((const char *)c->name, "name") == 0)
            name = node_text(c);
    if (name == NULL || *name == '\0') {
        log_error("boinc_emu: %s: <app> without <name>", path);
        free(name);
        return -1;
    }
    emu_app *a = app_slot(name);
    free(name);
    if (a->kind == NULL) {      /* a new app: defaults like uppercase */
        a->kind = xstrdup("uppercase");
        a->min_quorum = a->target_nresults = a->max_error_results = 1;
        a->max_total_results = 2;
        a->max_success_results = 1;
        a->delay_bound = 600;
    }
    int cleared_in = 0, cleared_out = 0;
    for (xmlNode *c = app_node->children; c; c = c->next) {
        if (c->type != XML_ELEMENT_NODE)
            continue;
        const char *tag = (const char *)c->name;
        int rc = 0;
        if (strcmp(tag, "name") == 0) {
            continue;
        } else if (strcmp(tag, "kind") == 0) {
            char *k = node_text(c);
            if (strcmp(k, "uppercase") && strcmp(k, "twoinout") &&
                strcmp(k, "zipout") && strcmp(k, "failer")) {
                log_error("boinc_emu: %s: unknown app kind '%s'", path, k);
                free(k);
                return -1;
            }
            free(a->kind);
            a->kind = k;
        } else if (strcmp(tag, "min_quorum") == 0) {
            rc = cfg_int(c, &a->min_quorum);
        } else if (strcmp(tag, "target_nresults") == 0) {
            rc = cfg_int(c, &a->target_nresults);
        } else if (strcmp(tag, "max_error_results") == 0) {
            rc = cfg_int(c, &a->max_error_results);
        } else if (strcmp(tag, "max_total_results") == 0) {
            rc = cfg_int(c, &a->max_total_results);
        } else if (strcmp(tag, "max_success_results") == 0) {
            rc = cfg_int(c, &a->max_success_results);
        } else if (strcmp(tag, "delay_bound") == 0) {
            char *s = node_text(c);
            rc = parse_double(s, &a->delay_bound);
            if (rc == 0 && a->delay_bound <= 0)
                rc = -1;
            free(s);
        } else if (strcmp(tag, "input") == 0 || strcmp(tag, "output") == 0) {
            int in = tag[0] == 'i';
            if (in && !cleared_in) {
                for (int i = 0; i < a->ninputs; i++)
                    free(a->inputs[i]);
                a->ninputs = 0;
                cleared_in = 1;
            } else if (!in && !cleared_out) {
                for (int i = 0; i < a->noutputs; i++)
                    free(a->outputs[i]);
                a->noutputs = 0;
                cleared_out = 1;
            }
            char *s = node_text(c);
            if (!valid_phys_name(s))
                rc = -1;
            else if (in)
                add_name(&a->inputs, &a->ninputs, s);
            else
                add_name(&a->outputs, &a->noutputs, s);
            free(s);
        } else {
            log_error("boinc_emu: %s: unknown element <%s> in <app>", path, tag);
            return -1;
        }
        if (rc != 0) {
            log_error("boinc_emu: %s: bad value in <%s> of app %s", path, tag, a->name);
            return -1;
        }
    }
    if (a->ninputs > 16 || a->noutputs > 16) {
        log_error("boinc_emu: %s: app %s: at most 16 inputs and 16 outputs", path, a->name);
        return -1;
    }
    /* the validator looks at up to 256 instances of a job */
    if (a->max_total_results > 256) {
        log_error("boinc_emu: %s: app %s: max_total_results must be <= 256", path, a->name);
        return -1;
    }
    if (a->min_quorum < 1 || a->target_nresults < a->min_quorum) {
        log_error("boinc_emu: %s: app %s needs 1 <= min_quorum <= target_nresults",
                  path, a->name);
        return -1;
    }
    app_make_templates(a);
    return 0;
}

int apps_load_config(const char *path)
{
    xmlDoc *doc = xmlReadFile(path, NULL, XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
    if (doc == NULL) {
        log_error("boinc_emu: cannot read config file %s (missing or not XML)", path);
        return -1;
    }
    xmlNode *root = xmlDocGetRootElement(doc);
    int rc = 0;
    if (root == NULL || strcmp((const char *)root->name, "emu_config") != 0) {
        log_error("boinc_emu: %s: root element must be <emu_config>", path);
        rc = -1;
    }
    for (xmlNode *c = root ? root->children : NULL; rc == 0 && c; c = c->next) {
        if (c->type != XML_ELEMENT_NODE)
            continue;
        const char *tag = (const char *)c->name;
        if (strcmp(tag, "app") == 0) {
            rc = cfg_app(c, path);
        } else if (strcmp(tag, "run_seconds") == 0) {
            char *s = node_text(c);
            if (parse_double(s, &G.run_seconds) != 0 || G.run_seconds < 0) {
                log_error("boinc_emu: %s: bad <run_seconds>", path);
                rc = -1;
            }
            free(s);
        } else if (strcmp(tag, "max_tasks_per_host") == 0) {
            if (cfg_int(c, &G.max_tasks_per_host) != 0 || G.max_tasks_per_host < 1) {
                log_error("boinc_emu: %s: bad <max_tasks_per_host>", path);
                rc = -1;
            }
        } else if (strcmp(tag, "post_max_bytes") == 0) {
            char *v = node_text(c);
            long n;
            if (parse_long(v, &n) != 0 || n < 0) {
                log_error("boinc_emu: %s: bad <post_max_bytes>", path);
                rc = -1;
            } else {
                G.post_max_bytes = n;
            }
            free(v);
        } else if (strcmp(tag, "max_file_uploads") == 0 ||
                   strcmp(tag, "upload_max_filesize") == 0) {
            char *v = node_text(c);
            char *spec = xasprintf("%s=%s", tag, v);
            if (php_limits_set(spec) != 0) {
                log_error("boinc_emu: %s: bad <%s>", path, tag);
                rc = -1;
            }
            free(spec);
            free(v);
        } else if (strcmp(tag, "spawn") == 0) {
            char *v = node_text(c);
            if (strcmp(v, "exec") == 0)
                G.spawn_exec = 1;
            else if (strcmp(v, "fork") == 0)
                G.spawn_exec = G.spawn_direct = 0;
            else if (strcmp(v, "direct") == 0)
                G.spawn_direct = 1;
            else {
                log_error("boinc_emu: %s: <spawn> must be fork, direct or exec", path);
                rc = -1;
            }
            free(v);
        } else if (strcmp(tag, "parallel") == 0) {
            if (cfg_int(c, &G.parallel) != 0 || G.parallel < 1) {
                log_error("boinc_emu: %s: bad <parallel>", path);
                rc = -1;
            }
        } else {
            log_error("boinc_emu: %s: unknown element <%s>", path, tag);
            rc = -1;
        }
    }
    xmlFreeDoc(doc);
    return rc;
}

/* ------------------------------------------------------------------ */
/* App mode: this runs in the child process, cwd = the slot directory.  */

static void app_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* stderr line in the style of the BOINC API: "date time (pid): text" */
static void app_log(const char *fmt, ...)
{
    time_t t = time(NULL);
    struct tm tm;
    char stamp[32];
    localtime_r(&t, &tm);
    strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M:%S", &tm);
    fprintf(stderr, "%s (%ld): ", stamp, (long)getpid());
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

static int load_input(const char *name, char **data, size_t *len)
{
    if (read_file(name, data, len) != 0) {
        app_log("can't read input file %s", name);
        return -1;
    }
    return 0;
}

static int app_uppercase(char **ins, int nin, char **outs, int nout)
{
    if (nin < 1 || nout < 1)
        return 2;
    char *d;
    size_t n;
    if (load_input(ins[0], &d, &n) != 0)
        return 2;
    for (size_t i = 0; i < n; i++)
        if (d[i] >= 'a' && d[i] <= 'z')
            d[i] = (char)(d[i] - 'a' + 'A');
    int rc = write_file(outs[0], d, n);
    free(d);
    return rc == 0 ? 0 : 3;
}

/* Sums the numbers found in both inputs; the second output is a log. */
static int app_twoinout(char **ins, int nin, char **outs, int nout)
{
    if (nin < 2 || nout < 2)
        return 2;
    double sum = 0;
    size_t sizes[2];
    for (int f = 0; f < 2; f++) {
        char *d;
        if (load_input(ins[f], &d, &sizes[f]) != 0)
            return 2;
        char *p = d;
        while (*p) {
            char *end;
            double v = strtod(p, &end);
            if (end == p) {
                p++;
                continue;
            }
            sum += v;
            p = end;
        }
        free(d);
    }
    char *s = xasprintf("%.17g\n", sum);
    char *l = xasprintf("%s: %zu bytes\n%s: %zu bytes\nsum: %.17g\n",
                        ins[0], sizes[0], ins[1], sizes[1], sum);
    int rc = write_file(outs[0], s, strlen(s)) | write_file(outs[1], l, strlen(l));
    free(s);
    free(l);
    return rc == 0 ? 0 : 3;
}

static int zip_add_member(zip_t *z, const char *name, const char *data, size_t len)
{
    zip_source_t *src = zip_source_buffer(z, data, len, 0);
    if (src == NULL)
        return -1;
    if (zip_file_add(z, name, src, ZIP_FL_OVERWRITE) < 0) {
        zip_source_free(src);
        return -1;
    }
    return 0;
}

/* One output: a zip archive with upper.txt, lower.txt and info.txt. */
static int app_zipout(char **ins, int nin, char **outs, int nout)
{
    if (nin < 1 || nout < 1)
        return 2;
    char *d;
    size_t n;
    if (load_input(ins[0], &d, &n) != 0)
        return 2;
    char *up = malloc(n + 1), *low = malloc(n + 1);
    if (up == NULL || low == NULL)
        return 3;
    for (size_t i = 0; i < n; i++) {
        char c = d[i];
        up[i] = (c >= 'a' && c <= 'z') ? (char)(c - 32) : c;
        low[i] = (c >= 'A' && c <= 'Z') ? (char)(c + 32) : c;
    }
    char *info = xasprintf("input bytes: %zu\n", n);
    int err = 0;
    zip_t *z = zip_open(outs[0], ZIP_CREATE | ZIP_TRUNCATE, &err);
    int rc = 3;
    if (z != NULL) {
        if (zip_add_member(z, "upper.txt", up, n) == 0 && zip_add_member(z, "lower.txt", low, n) == 0 &&
            zip_add_member(z, "info.txt", info, strlen(info)) == 0 && zip_close(z) == 0)
            rc = 0;
        else
            zip_discard(z);
    }
    free(d);
    free(up);
    free(low);
    free(info);
    return rc;
}

static int app_failer(char **ins, int nin, char **outs, int nout)
{
    if (nout < 1)
        return 2;
    char *d = NULL;
    size_t n = 0;
    if (nin > 0 && load_input(ins[0], &d, &n) != 0)
        return 2;
    int rc = write_file(outs[0], d ? d : "", n);
    free(d);
    return rc == 0 ? 0 : 3;
}

/* Appending a line makes the output differ from honest hosts' outputs. */
static void corrupt_outputs(char **outs, int nout)
{
    for (int i = 0; i < nout; i++) {
        FILE *fp = fopen(outs[i], "ab");
        if (fp) {
            fputs("WRONG RESULT FROM A BAD HOST\n", fp);
            fclose(fp);
        }
    }
}

/* argv: --run-app KIND --slot DIR [--in N]... [--out N]... [--behaviour B]
 *       [-- app arguments] */
int run_app_main(int argc, char **argv)
{
    const char *kind = NULL, *slot = NULL, *behaviour = "succeed";
    char *ins[16], *outs[16];
    int nin = 0, nout = 0, i;
    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0) {
            i++;
            break;
        }
        if (i + 1 >= argc)
            return 2;
        if (strcmp(argv[i], "--run-app") == 0) kind = argv[++i];
        else if (strcmp(argv[i], "--slot") == 0) slot = argv[++i];
        else if (strcmp(argv[i], "--behaviour") == 0) behaviour = argv[++i];
        else if (strcmp(argv[i], "--in") == 0 && nin < 16) ins[nin++] = argv[++i];
        else if (strcmp(argv[i], "--out") == 0 && nout < 16) outs[nout++] = argv[++i];
        else {
            fprintf(stderr, "boinc_emu --run-app: bad or too many arguments at %s\n", argv[i]);
            return 2;
        }
    }
    if (kind == NULL || slot == NULL || chdir(slot) != 0) {
        fprintf(stderr, "boinc_emu --run-app: bad arguments or slot directory\n");
        return 2;
    }
    app_log("app started; kind %s", kind);
    for (int a = i; a < argc; a++)
        app_log("argument %d: [%s]", a - i + 1, argv[a]);
    long exit_code = 0;
    for (int a = i; a < argc; a++) {
        if (strcmp(argv[a], "--exit") == 0 && a + 1 < argc) {
            if (parse_long(argv[a + 1], &exit_code) != 0 || exit_code < 0 || exit_code > 255) {
                app_log("bad --exit value %s", argv[a + 1]);
                return 2;
            }
            a++;
        } else if (strcmp(argv[a], "--early_exit") == 0) {
            exit_code = 246;
        } else if (strcmp(argv[a], "--times") == 0 && a + 2 < argc) {
            /* the run's elapsed and CPU seconds as the emulator reports them
             * (backend.c, collect_run): a test job with non-zero times */
            double e, c;
            if (parse_double(argv[a + 1], &e) != 0 || parse_double(argv[a + 2], &c) != 0 ||
                e < 0 || c < 0) {
                app_log("bad --times values %s %s", argv[a + 1], argv[a + 2]);
                return 2;
            }
            app_log("%s%s %s", EMU_TIMES_LINE, argv[a + 1], argv[a + 2]);
            a += 2;
        }
    }
    if (strcmp(behaviour, "crash") == 0) {
        app_log("%s", "simulated crash (host behaviour 'crash')");
        return 1;
    }
    if (exit_code != 0) {
        app_log("exiting with code %ld as requested", exit_code);
        return (int)exit_code;
    }
    int rc;
    if (strcmp(kind, "uppercase") == 0) rc = app_uppercase(ins, nin, outs, nout);
    else if (strcmp(kind, "twoinout") == 0) rc = app_twoinout(ins, nin, outs, nout);
    else if (strcmp(kind, "zipout") == 0) rc = app_zipout(ins, nin, outs, nout);
    else if (strcmp(kind, "failer") == 0) rc = app_failer(ins, nin, outs, nout);
    else {
        app_log("unknown app kind %s", kind);
        return 2;
    }
    if (rc == 0 && strcmp(behaviour, "wrong") == 0)
        corrupt_outputs(outs, nout);
    if (rc == 0)
        app_log("%s", "called boinc_finish(0)");
    return rc;
}
