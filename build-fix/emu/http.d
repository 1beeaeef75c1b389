build-fix/emu/http.o: tests/emu/http.c tests/emu/emu.h src/base/strbuf.h \
 src/base/log.h
tests/emu/emu.h:
src/base/strbuf.h:
src/base/log.h:
