build-fix/emu/control.o: tests/emu/control.c tests/emu/emu.h \
 src/base/strbuf.h
tests/emu/emu.h:
src/base/strbuf.h:
