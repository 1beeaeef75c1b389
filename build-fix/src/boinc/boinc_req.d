build-fix/src/boinc/boinc_req.o: src/boinc/boinc_req.c \
 src/boinc/boinc_internal.h src/boinc/boinc.h src/base/strbuf.h
src/boinc/boinc_internal.h:
src/boinc/boinc.h:
src/base/strbuf.h:
