build-fix/src/boinc/boinc_util.o: src/boinc/boinc_util.c \
 src/boinc/boinc_internal.h src/boinc/boinc.h src/base/strbuf.h
src/boinc/boinc_internal.h:
src/boinc/boinc.h:
src/base/strbuf.h:
