build-fix/src/fetch/fetch.o: src/fetch/fetch.c src/exec/exec_cmds.h \
 src/exec/exec.h src/boinc/boinc.h src/wire/request.h src/config/config.h \
 src/base/log.h src/journal/journal.h src/fetch/fetch_download.h \
 src/fetch/fetch_step.h src/fetch/fetch_templates.h src/fetch/fetch_zip.h \
 src/journal/journal_batches.h src/journal/batch_state.h \
 src/fetch/outputs.h src/base/strbuf.h
src/exec/exec_cmds.h:
src/exec/exec.h:
src/boinc/boinc.h:
src/wire/request.h:
src/config/config.h:
src/base/log.h:
src/journal/journal.h:
src/fetch/fetch_download.h:
src/fetch/fetch_step.h:
src/fetch/fetch_templates.h:
src/fetch/fetch_zip.h:
src/journal/journal_batches.h:
src/journal/batch_state.h:
src/fetch/outputs.h:
src/base/strbuf.h:
