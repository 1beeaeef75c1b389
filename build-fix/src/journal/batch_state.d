build-fix/src/journal/batch_state.o: src/journal/batch_state.c \
 src/journal/batch_state.h
src/journal/batch_state.h:
