build-fix/src/journal/journal_checkpoint.o: \
 src/journal/journal_checkpoint.c src/journal/journal_internal.h \
 src/journal/journal.h src/base/log.h
src/journal/journal_internal.h:
src/journal/journal.h:
src/base/log.h:
