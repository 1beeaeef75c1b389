build-fix/src/base/testpoint.o: src/base/testpoint.c src/base/testpoint.h \
 src/base/log.h
src/base/testpoint.h:
src/base/log.h:
