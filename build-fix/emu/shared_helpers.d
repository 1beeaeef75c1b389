build-fix/emu/shared_helpers.o: tests/emu/shared_helpers.c src/base/log.c \
 src/base/log.h src/base/strbuf.c src/base/strbuf.h
src/base/log.c:
src/base/log.h:
src/base/strbuf.c:
src/base/strbuf.h:
