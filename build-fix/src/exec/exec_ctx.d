build-fix/src/exec/exec_ctx.o: src/exec/exec_ctx.c src/exec/exec_ctx.h \
 src/exec/exec.h src/boinc/boinc.h src/wire/request.h src/config/config.h \
 src/base/log.h src/journal/journal.h src/base/strbuf.h
src/exec/exec_ctx.h:
src/exec/exec.h:
src/boinc/boinc.h:
src/wire/request.h:
src/config/config.h:
src/base/log.h:
src/journal/journal.h:
src/base/strbuf.h:
