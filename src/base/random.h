/*
 * random.h — bytes from the kernel's random source, for keys (the
 * database's approval key, store/approval_seal.c). Never a seeded PRNG: a
 * key must not be guessable from the time or the pid.
 */
#ifndef TG_RANDOM_H
#define TG_RANDOM_H

#include <stddef.h>

/* Fills buf with n bytes from getrandom(2), or /dev/urandom where the
 * call is missing. 0, or -errno (nothing usable was read). */
int tg__random_bytes(void *buf, size_t n);

#endif
