build-fix/src/fetch/outputs.o: src/fetch/outputs.c src/fetch/outputs.h \
 src/base/log.h src/base/strbuf.h src/base/strset.h
src/fetch/outputs.h:
src/base/log.h:
src/base/strbuf.h:
src/base/strset.h:
