build-fix/src/submit/submit_files.o: src/submit/submit_files.c \
 src/submit/submit_files.h src/submit/engine.h src/boinc/boinc.h \
 src/exec/exec.h src/wire/request.h src/config/config.h src/base/log.h \
 src/journal/journal.h src/journal/journal_batches.h \
 src/journal/batch_state.h src/submit/file_claims.h src/exec/exec_ctx.h \
 src/base/files.h src/journal/journal_files.h src/base/testpoint.h \
 src/submit/upload_limits.h
src/submit/submit_files.h:
src/submit/engine.h:
src/boinc/boinc.h:
src/exec/exec.h:
src/wire/request.h:
src/config/config.h:
src/base/log.h:
src/journal/journal.h:
src/journal/journal_batches.h:
src/journal/batch_state.h:
src/submit/file_claims.h:
src/exec/exec_ctx.h:
src/base/files.h:
src/journal/journal_files.h:
src/base/testpoint.h:
src/submit/upload_limits.h:
