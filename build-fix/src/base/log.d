build-fix/src/base/log.o: src/base/log.c src/base/log.h
src/base/log.h:
