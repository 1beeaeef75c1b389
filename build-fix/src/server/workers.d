build-fix/src/server/workers.o: src/server/workers.c src/server/workers.h \
 src/exec/exec.h src/boinc/boinc.h src/wire/request.h src/config/config.h \
 src/base/log.h src/journal/journal.h src/server/shared.h \
 src/server/command.h src/exec/exec_ctx.h src/base/strbuf.h
src/server/workers.h:
src/exec/exec.h:
src/boinc/boinc.h:
src/wire/request.h:
src/config/config.h:
src/base/log.h:
src/journal/journal.h:
src/server/shared.h:
src/server/command.h:
src/exec/exec_ctx.h:
src/base/strbuf.h:
