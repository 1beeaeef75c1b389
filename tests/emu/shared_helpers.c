/*
 * shared_helpers.c - links the project's own log (with the dirs it uses) and strbuf helpers into
 * the emulator.
 *
 * The Makefile builds boinc_emu only from the .c files of tests/emu, so the helpers in
 * src/ are compiled here as part of this translation unit (found through
 * -Isrc) instead of being duplicated.
 */
#include "base/dirs.c"
#include "base/log.c"
#include "base/strbuf.c"
