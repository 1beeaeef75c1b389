build-fix/src/journal/journal_files.o: src/journal/journal_files.c \
 src/journal/journal_files.h src/base/files.h src/journal/journal.h \
 src/journal/journal_batches.h src/journal/batch_state.h \
 src/journal/journal_internal.h src/base/strbuf.h
src/journal/journal_files.h:
src/base/files.h:
src/journal/journal.h:
src/journal/journal_batches.h:
src/journal/batch_state.h:
src/journal/journal_internal.h:
src/base/strbuf.h:
