build-fix/src/server/recovery.o: src/server/recovery.c \
 src/server/recovery.h src/config/config.h src/base/log.h \
 src/journal/journal.h src/server/protocol.h src/base/strbuf.h \
 src/server/workers.h src/exec/exec.h src/boinc/boinc.h \
 src/wire/request.h src/server/command.h src/wire/gahp_text.h \
 src/journal/journal_requests.h
src/server/recovery.h:
src/config/config.h:
src/base/log.h:
src/journal/journal.h:
src/server/protocol.h:
src/base/strbuf.h:
src/server/workers.h:
src/exec/exec.h:
src/boinc/boinc.h:
src/wire/request.h:
src/server/command.h:
src/wire/gahp_text.h:
src/journal/journal_requests.h:
