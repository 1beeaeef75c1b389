build-fix/src/server/shared.o: src/server/shared.c src/server/shared.h \
 src/exec/exec.h src/boinc/boinc.h src/wire/request.h src/config/config.h \
 src/base/log.h src/journal/journal.h src/fetch/fetch_templates.h \
 src/fetch/fetch_step.h src/submit/file_claims.h \
 src/submit/submit_registry.h
src/server/shared.h:
src/exec/exec.h:
src/boinc/boinc.h:
src/wire/request.h:
src/config/config.h:
src/base/log.h:
src/journal/journal.h:
src/fetch/fetch_templates.h:
src/fetch/fetch_step.h:
src/submit/file_claims.h:
src/submit/submit_registry.h:
