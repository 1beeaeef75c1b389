build-fix/src/config/config.o: src/config/config.c src/config/config.h \
 src/base/log.h src/base/num.h src/base/strbuf.h src/base/url.h \
 src/base/version.h
src/config/config.h:
src/base/log.h:
src/base/num.h:
src/base/strbuf.h:
src/base/url.h:
src/base/version.h:
