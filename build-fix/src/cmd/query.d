build-fix/src/cmd/query.o: src/cmd/query.c src/exec/exec_cmds.h \
 src/exec/exec.h src/boinc/boinc.h src/wire/request.h src/config/config.h \
 src/base/log.h src/journal/journal.h src/journal/journal_requests.h \
 src/journal/journal_batches.h src/journal/batch_state.h src/base/num.h \
 src/wire/gahp_text.h src/base/strbuf.h
src/exec/exec_cmds.h:
src/exec/exec.h:
src/boinc/boinc.h:
src/wire/request.h:
src/config/config.h:
src/base/log.h:
src/journal/journal.h:
src/journal/journal_requests.h:
src/journal/journal_batches.h:
src/journal/batch_state.h:
src/base/num.h:
src/wire/gahp_text.h:
src/base/strbuf.h:
