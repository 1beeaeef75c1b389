build-fix/src/base/files.o: src/base/files.c src/base/files.h \
 src/base/strbuf.h src/base/strset.h
src/base/files.h:
src/base/strbuf.h:
src/base/strset.h:
