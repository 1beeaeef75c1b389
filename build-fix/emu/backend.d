build-fix/emu/backend.o: tests/emu/backend.c tests/emu/emu.h \
 src/base/strbuf.h tests/emu/apprunner.h src/base/log.h
tests/emu/emu.h:
src/base/strbuf.h:
tests/emu/apprunner.h:
src/base/log.h:
