build-fix/src/fetch/fetch_templates.o: src/fetch/fetch_templates.c \
 src/fetch/fetch_templates.h src/fetch/fetch_step.h src/exec/exec.h \
 src/boinc/boinc.h src/wire/request.h src/config/config.h src/base/log.h \
 src/journal/journal.h src/journal/journal_batches.h \
 src/journal/batch_state.h
src/fetch/fetch_templates.h:
src/fetch/fetch_step.h:
src/exec/exec.h:
src/boinc/boinc.h:
src/wire/request.h:
src/config/config.h:
src/base/log.h:
src/journal/journal.h:
src/journal/journal_batches.h:
src/journal/batch_state.h:
