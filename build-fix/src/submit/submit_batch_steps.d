build-fix/src/submit/submit_batch_steps.o: \
 src/submit/submit_batch_steps.c src/submit/submit_batch_steps.h \
 src/submit/engine.h src/boinc/boinc.h src/exec/exec.h src/wire/request.h \
 src/config/config.h src/base/log.h src/journal/journal.h \
 src/journal/journal_batches.h src/journal/batch_state.h \
 src/base/testpoint.h
src/submit/submit_batch_steps.h:
src/submit/engine.h:
src/boinc/boinc.h:
src/exec/exec.h:
src/wire/request.h:
src/config/config.h:
src/base/log.h:
src/journal/journal.h:
src/journal/journal_batches.h:
src/journal/batch_state.h:
src/base/testpoint.h:
