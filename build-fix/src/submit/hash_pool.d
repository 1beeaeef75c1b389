build-fix/src/submit/hash_pool.o: src/submit/hash_pool.c \
 src/submit/hash_pool.h
src/submit/hash_pool.h:
