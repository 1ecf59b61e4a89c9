/*
 * util.h — small helpers every layer uses: clock, random numbers, strings.
 */
#ifndef TG_UTIL_H
#define TG_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* Milliseconds from the monotonic clock (uv_hrtime based). */
double tg__now_ms(void);
/* Milliseconds since the Unix epoch (the wall clock: audit, exports). */
double tg__wall_ms(void);
/* Uniform double in [0, 1) from an xorshift64* state (never 0). */
double tg__random(uint64_t *state);
/* strdup that accepts NULL. Returns NULL only for NULL. Aborts never:
 * on allocation failure returns NULL and callers treat it as OOM. */
char *tg__strdup(const char *s);
/* snprintf into err when err is not NULL. */
void tg__errf(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
