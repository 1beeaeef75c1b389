build-fix/src/fetch/fetch_step.o: src/fetch/fetch_step.c \
 src/fetch/fetch_step.h src/exec/exec.h src/boinc/boinc.h \
 src/wire/request.h src/config/config.h src/base/log.h \
 src/journal/journal.h src/base/strbuf.h
src/fetch/fetch_step.h:
src/exec/exec.h:
src/boinc/boinc.h:
src/wire/request.h:
src/config/config.h:
src/base/log.h:
src/journal/journal.h:
src/base/strbuf.h:
