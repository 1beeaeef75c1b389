build-fix/src/exec/exec.o: src/exec/exec.c src/exec/exec.h \
 src/boinc/boinc.h src/wire/request.h src/config/config.h src/base/log.h \
 src/journal/journal.h src/wire/gahp_text.h src/base/strbuf.h
src/exec/exec.h:
src/boinc/boinc.h:
src/wire/request.h:
src/config/config.h:
src/base/log.h:
src/journal/journal.h:
src/wire/gahp_text.h:
src/base/strbuf.h:
