build-fix/src/submit/submit_deadline.o: src/submit/submit_deadline.c \
 src/submit/submit_deadline.h src/exec/exec.h src/boinc/boinc.h \
 src/wire/request.h src/config/config.h src/base/log.h \
 src/journal/journal.h src/exec/exec_ctx.h
src/submit/submit_deadline.h:
src/exec/exec.h:
src/boinc/boinc.h:
src/wire/request.h:
src/config/config.h:
src/base/log.h:
src/journal/journal.h:
src/exec/exec_ctx.h:
