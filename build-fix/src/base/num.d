build-fix/src/base/num.o: src/base/num.c src/base/num.h
src/base/num.h:
