/* util.c — small helpers every module uses: clock, RNG, strings, names. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <uv.h>
#include <cjson/cJSON.h>
#include "toolgate.h"
#include "util.h"

double tg__now_ms(void) { return (double)uv_hrtime() / 1e6; }

double tg__wall_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (double)ts.tv_sec * 1e3 + (double)(ts.tv_nsec / 1000000);
}

/* xorshift64*: small, fast, and its state lives in the runtime. */
double tg__random(uint64_t *state) {
  uint64_t x = *state;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *state = x;
  return (double)((x * 2685821657736338717ULL) >> 11) / 9007199254740992.0;
}

char *tg__strdup(const char *s) {
  if (!s) return NULL;
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

void tg__errf(char *err, size_t errlen, const char *fmt, ...) {
  if (!err || errlen == 0) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, errlen, fmt, ap);
  va_end(ap);
}

const char *tg_phase_name(tg_phase phase) {
  static const char *const names[] = {
#define TG_PHASE_STR(name) #name,
      TG_PHASE_MAP(TG_PHASE_STR)
#undef TG_PHASE_STR
  };
  return (unsigned)phase < TG_PHASE__COUNT ? names[phase] : "INTERNAL";
}

const char *tg_status_name(tg_status s) {
  switch (s) {
#define TG_STATUS_CASE(name, str) \
  case TG_STATUS_##name:          \
    return str;
    TG_STATUS_MAP(TG_STATUS_CASE)
#undef TG_STATUS_CASE
  }
  return "error";
}

const char *tg_verdict_name(tg_verdict v) {
  switch (v) {
    case TG_VERDICT_ALLOW: return "allow";
    case TG_VERDICT_DENY: return "deny";
    case TG_VERDICT_ASK: return "ask";
    default: return "none";
  }
}
