build-fix/src/cmd/manage.o: src/cmd/manage.c src/exec/exec_cmds.h \
 src/exec/exec.h src/boinc/boinc.h src/wire/request.h src/config/config.h \
 src/base/log.h src/journal/journal.h src/journal/journal_batches.h \
 src/journal/batch_state.h
src/exec/exec_cmds.h:
src/exec/exec.h:
src/boinc/boinc.h:
src/wire/request.h:
src/config/config.h:
src/base/log.h:
src/journal/journal.h:
src/journal/journal_batches.h:
src/journal/batch_state.h:
