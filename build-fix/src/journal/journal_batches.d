build-fix/src/journal/journal_batches.o: src/journal/journal_batches.c \
 src/journal/journal_batches.h src/journal/journal.h \
 src/journal/batch_state.h src/journal/journal_internal.h
src/journal/journal_batches.h:
src/journal/journal.h:
src/journal/batch_state.h:
src/journal/journal_internal.h:
