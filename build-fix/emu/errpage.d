build-fix/emu/errpage.o: tests/emu/errpage.c tests/emu/emu.h \
 src/base/strbuf.h
tests/emu/emu.h:
src/base/strbuf.h:
