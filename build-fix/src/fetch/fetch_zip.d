build-fix/src/fetch/fetch_zip.o: src/fetch/fetch_zip.c \
 src/fetch/fetch_zip.h src/fetch/fetch_step.h src/exec/exec.h \
 src/boinc/boinc.h src/wire/request.h src/config/config.h src/base/log.h \
 src/journal/journal.h src/fetch/fetch_download.h \
 src/fetch/fetch_select.h src/fetch/outputs.h src/base/strbuf.h
src/fetch/fetch_zip.h:
src/fetch/fetch_step.h:
src/exec/exec.h:
src/boinc/boinc.h:
src/wire/request.h:
src/config/config.h:
src/base/log.h:
src/journal/journal.h:
src/fetch/fetch_download.h:
src/fetch/fetch_select.h:
src/fetch/outputs.h:
src/base/strbuf.h:
