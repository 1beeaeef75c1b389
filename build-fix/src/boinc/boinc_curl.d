build-fix/src/boinc/boinc_curl.o: src/boinc/boinc_curl.c \
 src/boinc/boinc_internal.h src/boinc/boinc.h src/base/strbuf.h \
 src/base/url.h
src/boinc/boinc_internal.h:
src/boinc/boinc.h:
src/base/strbuf.h:
src/base/url.h:
