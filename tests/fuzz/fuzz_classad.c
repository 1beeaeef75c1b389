/*
 * fuzz_classad.c - libFuzzer harness for the ClassAd text of BLAH_JOB_SUBMIT
 * (wire/classad.c) and the ad's fields (wire/blah_submit_ad.c): one input is
 * one job ad as the line carries it, unescaped.  Checked beyond "no crash":
 * every string attribute written back as HTCondor's unparser writes it
 * (classad_put_name, classad_put_string) parses to the same name and value
 * (abort() on a difference), and the V2 argument and list splitters accept
 * any string value.  Built and run by `make fuzz`; seeds in
 * tests/fuzz/corpus/classad (ads the real 25.0.13 grid manager sent, and
 * ads in their exact shape with UTF-8, octal escapes and quoted names).
 */
#include "wire/classad.h"
#include "wire/request.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* "[ <name> = <value> ]", both written as HTCondor's unparser writes them
 * (classad_put_name, classad_put_string), parses back to exactly name and
 * value: every byte but NUL survives the trip. */
static void round_trip(const char *name, const char *value)
{
    strbuf sb = STRBUF_INIT;
    if (strbuf_puts(&sb, "[ ") != 0 || classad_put_name(&sb, name) != 0 ||
        strbuf_puts(&sb, " = ") != 0 || classad_put_string(&sb, value) != 0 ||
        strbuf_puts(&sb, " ]") != 0) {
        strbuf_free(&sb);
        return;
    }
    classad ad;
    char *why = NULL;
    int rc = classad_parse(sb.data, &ad, &why);
    if (rc == -2) {
        strbuf_free(&sb);
        return;
    }
    if (rc != 0 || ad.n != 1 || strcmp(ad.attrs[0].name, name) != 0 ||
        !ad.attrs[0].is_string || strcmp(ad.attrs[0].value, value) != 0)
        abort();
    classad_free(&ad);
    strbuf_free(&sb);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (text == NULL)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    classad ad;
    char *why = NULL;
    if (classad_parse(text, &ad, &why) == 0) {
        for (size_t i = 0; i < ad.n; i++) {
            if (!ad.attrs[i].is_string)
                continue;
            round_trip(ad.attrs[i].name, ad.attrs[i].value);
            char **v = NULL;
            size_t n = 0;
            const char *split_why = NULL;
            if (classad_split_args(ad.attrs[i].value, &v, &n, &split_why) == 0)
                strv_free(v, n);
            if (classad_split_list(ad.attrs[i].value, &v, &n) == 0)
                strv_free(v, n);
        }
        classad_free(&ad);
    }
    free(why);
    gahp_blah_submit s;
    char *err = NULL;
    if (gahp_blah_submit_from_ad(text, &s, &err) >= 0)
        gahp_blah_submit_free(&s);
    free(err);
    free(text);
    return 0;
}
