build-fix/emu/util.o: tests/emu/util.c tests/emu/emu.h src/base/strbuf.h \
 src/base/log.h
tests/emu/emu.h:
src/base/strbuf.h:
src/base/log.h:
