build-fix/src/base/url.o: src/base/url.c src/base/url.h
src/base/url.h:
