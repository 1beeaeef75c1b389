build-fix/src/server/command.o: src/server/command.c src/server/command.h \
 src/wire/request.h src/exec/exec.h src/boinc/boinc.h src/config/config.h \
 src/base/log.h src/journal/journal.h src/exec/exec_cmds.h \
 src/wire/gahp_text.h src/base/strbuf.h src/journal/journal_requests.h
src/server/command.h:
src/wire/request.h:
src/exec/exec.h:
src/boinc/boinc.h:
src/config/config.h:
src/base/log.h:
src/journal/journal.h:
src/exec/exec_cmds.h:
src/wire/gahp_text.h:
src/base/strbuf.h:
src/journal/journal_requests.h:
