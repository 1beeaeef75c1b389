build-fix/src/submit/engine.o: src/submit/engine.c src/submit/engine.h \
 src/boinc/boinc.h src/exec/exec.h src/wire/request.h src/config/config.h \
 src/base/log.h src/journal/journal.h src/journal/journal_batches.h \
 src/journal/batch_state.h src/wire/gahp_text.h src/base/strbuf.h \
 src/base/testpoint.h
src/submit/engine.h:
src/boinc/boinc.h:
src/exec/exec.h:
src/wire/request.h:
src/config/config.h:
src/base/log.h:
src/journal/journal.h:
src/journal/journal_batches.h:
src/journal/batch_state.h:
src/wire/gahp_text.h:
src/base/strbuf.h:
src/base/testpoint.h:
