build-fix/src/base/strset.o: src/base/strset.c src/base/strset.h
src/base/strset.h:
