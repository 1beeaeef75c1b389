build-fix/src/boinc/boinc_reply.o: src/boinc/boinc_reply.c \
 src/boinc/boinc_internal.h src/boinc/boinc.h src/base/strbuf.h
src/boinc/boinc_internal.h:
src/boinc/boinc.h:
src/base/strbuf.h:
