build-fix/src/submit/file_claims.o: src/submit/file_claims.c \
 src/submit/file_claims.h src/base/strset.h
src/submit/file_claims.h:
src/base/strset.h:
