build-fix/src/submit/submit_inputs.o: src/submit/submit_inputs.c \
 src/submit/submit_inputs.h src/submit/engine.h src/boinc/boinc.h \
 src/exec/exec.h src/wire/request.h src/config/config.h src/base/log.h \
 src/journal/journal.h src/journal/journal_batches.h \
 src/journal/batch_state.h src/base/files.h src/submit/hash_pool.h \
 src/journal/journal_files.h src/base/strbuf.h src/base/strset.h
src/submit/submit_inputs.h:
src/submit/engine.h:
src/boinc/boinc.h:
src/exec/exec.h:
src/wire/request.h:
src/config/config.h:
src/base/log.h:
src/journal/journal.h:
src/journal/journal_batches.h:
src/journal/batch_state.h:
src/base/files.h:
src/submit/hash_pool.h:
src/journal/journal_files.h:
src/base/strbuf.h:
src/base/strset.h:
