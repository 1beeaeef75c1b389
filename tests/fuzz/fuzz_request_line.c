/*
 * fuzz_request_line.c - libFuzzer harness for the GAHP request-line
 * parser: one input is one line as the reader hands it over (without its
 * LF), tokenised (gahp_tokenize) and parsed into a typed request through
 * the command table (command_parse_request) exactly as protocol.c does.  Built and run by
 * `make fuzz` (clang, -fsanitize=fuzzer,address,undefined); seeds in
 * tests/fuzz/corpus/request_line.
 */
#include "server/command.h"
#include "wire/gahp_text.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* The tokenizer works in place on a NUL-terminated copy, as the line
     * reader provides it. */
    char *line = malloc(size + 1);
    if (line == NULL)
        return 0;
    memcpy(line, data, size);
    line[size] = '\0';
    gahp_args args;
    memset(&args, 0, sizeof args);
    if (gahp_tokenize(line, size, &args) == GAHP_TOK_OK && args.argc > 0) {
        gahp_request *req = NULL;
        const char *why = NULL;
        if (command_parse_request(args.argv, args.argc, &req, &why) == 0)
            gahp_request_free(req);
    }
    gahp_args_free(&args);
    free(line);
    return 0;
}
