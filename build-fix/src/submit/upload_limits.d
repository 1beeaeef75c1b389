build-fix/src/submit/upload_limits.o: src/submit/upload_limits.c \
 src/submit/upload_limits.h src/base/files.h
src/submit/upload_limits.h:
src/base/files.h:
