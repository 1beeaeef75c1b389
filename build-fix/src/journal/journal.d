build-fix/src/journal/journal.o: src/journal/journal.c \
 src/journal/journal.h src/journal/journal_internal.h src/base/log.h \
 build-fix/gen/migrations.h src/base/strbuf.h
src/journal/journal.h:
src/journal/journal_internal.h:
src/base/log.h:
build-fix/gen/migrations.h:
src/base/strbuf.h:
