build-fix/src/main.o: src/main.c src/boinc/boinc.h src/config/config.h \
 src/base/log.h src/journal/journal.h src/base/log.h \
 src/server/protocol.h src/config/config.h src/journal/journal.h \
 src/base/strbuf.h src/server/recovery.h src/server/protocol.h \
 src/server/workers.h src/exec/exec.h src/boinc/boinc.h \
 src/wire/request.h src/server/workers.h
src/boinc/boinc.h:
src/config/config.h:
src/base/log.h:
src/journal/journal.h:
src/base/log.h:
src/server/protocol.h:
src/config/config.h:
src/journal/journal.h:
src/base/strbuf.h:
src/server/recovery.h:
src/server/protocol.h:
src/server/workers.h:
src/exec/exec.h:
src/boinc/boinc.h:
src/wire/request.h:
src/server/workers.h:
