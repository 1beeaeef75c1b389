build-fix/emu/apprunner.o: tests/emu/apprunner.c tests/emu/emu.h \
 src/base/strbuf.h tests/emu/apprunner.h
tests/emu/emu.h:
src/base/strbuf.h:
tests/emu/apprunner.h:
