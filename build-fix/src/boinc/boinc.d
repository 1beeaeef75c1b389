build-fix/src/boinc/boinc.o: src/boinc/boinc.c src/boinc/boinc.h \
 src/boinc/boinc_internal.h src/base/strbuf.h
src/boinc/boinc.h:
src/boinc/boinc_internal.h:
src/base/strbuf.h:
