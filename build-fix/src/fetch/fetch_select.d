build-fix/src/fetch/fetch_select.o: src/fetch/fetch_select.c \
 src/fetch/fetch_select.h src/exec/exec.h src/boinc/boinc.h \
 src/wire/request.h src/config/config.h src/base/log.h \
 src/journal/journal.h src/fetch/fetch_step.h src/fetch/outputs.h
src/fetch/fetch_select.h:
src/exec/exec.h:
src/boinc/boinc.h:
src/wire/request.h:
src/config/config.h:
src/base/log.h:
src/journal/journal.h:
src/fetch/fetch_step.h:
src/fetch/outputs.h:
