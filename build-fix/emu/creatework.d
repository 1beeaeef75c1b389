build-fix/emu/creatework.o: tests/emu/creatework.c tests/emu/emu.h \
 src/base/strbuf.h
tests/emu/emu.h:
src/base/strbuf.h:
