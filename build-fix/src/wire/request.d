build-fix/src/wire/request.o: src/wire/request.c src/wire/request.h \
 src/wire/gahp_text.h src/base/strbuf.h src/base/num.h
src/wire/request.h:
src/wire/gahp_text.h:
src/base/strbuf.h:
src/base/num.h:
