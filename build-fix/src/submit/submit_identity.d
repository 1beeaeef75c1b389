build-fix/src/submit/submit_identity.o: src/submit/submit_identity.c \
 src/submit/submit_identity.h src/wire/request.h \
 src/journal/journal_batches.h src/journal/journal.h \
 src/journal/batch_state.h src/journal/journal_requests.h \
 src/base/files.h src/wire/gahp_text.h src/base/strbuf.h src/base/log.h
src/submit/submit_identity.h:
src/wire/request.h:
src/journal/journal_batches.h:
src/journal/journal.h:
src/journal/batch_state.h:
src/journal/journal_requests.h:
src/base/files.h:
src/wire/gahp_text.h:
src/base/strbuf.h:
src/base/log.h:
