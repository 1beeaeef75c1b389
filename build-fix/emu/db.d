build-fix/emu/db.o: tests/emu/db.c tests/emu/emu.h src/base/strbuf.h \
 src/base/log.h
tests/emu/emu.h:
src/base/strbuf.h:
src/base/log.h:
