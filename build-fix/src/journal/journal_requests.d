build-fix/src/journal/journal_requests.o: src/journal/journal_requests.c \
 src/journal/journal_requests.h src/journal/journal.h \
 src/journal/journal_batches.h src/journal/batch_state.h \
 src/journal/journal_internal.h src/base/strbuf.h
src/journal/journal_requests.h:
src/journal/journal.h:
src/journal/journal_batches.h:
src/journal/batch_state.h:
src/journal/journal_internal.h:
src/base/strbuf.h:
