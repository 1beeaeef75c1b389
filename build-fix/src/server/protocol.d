build-fix/src/server/protocol.o: src/server/protocol.c \
 src/server/protocol.h src/config/config.h src/base/log.h \
 src/journal/journal.h src/base/strbuf.h src/base/url.h \
 src/server/command.h src/wire/request.h src/exec/exec.h \
 src/boinc/boinc.h src/wire/gahp_text.h src/base/testpoint.h \
 src/server/workers.h
src/server/protocol.h:
src/config/config.h:
src/base/log.h:
src/journal/journal.h:
src/base/strbuf.h:
src/base/url.h:
src/server/command.h:
src/wire/request.h:
src/exec/exec.h:
src/boinc/boinc.h:
src/wire/gahp_text.h:
src/base/testpoint.h:
src/server/workers.h:
