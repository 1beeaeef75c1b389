build-fix/src/submit/job_args.o: src/submit/job_args.c \
 src/submit/job_args.h src/base/strbuf.h
src/submit/job_args.h:
src/base/strbuf.h:
