build-fix/src/wire/gahp_text.o: src/wire/gahp_text.c src/wire/gahp_text.h \
 src/base/strbuf.h
src/wire/gahp_text.h:
src/base/strbuf.h:
