build-fix/emu/output.o: tests/emu/output.c tests/emu/emu.h \
 src/base/strbuf.h
tests/emu/emu.h:
src/base/strbuf.h:
