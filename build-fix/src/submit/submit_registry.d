build-fix/src/submit/submit_registry.o: src/submit/submit_registry.c \
 src/submit/submit_registry.h
src/submit/submit_registry.h:
