/*
 * jsonnum.c — range-checked JSON number to C integer (jsonnum.h).
 *
 * The checks are done on the double, before any cast: NaN and infinity
 * fail every comparison or the finiteness test, a fraction fails
 * floor(d) == d, and min/max (within 2^53) are exact doubles, so once
 * min <= d <= max holds the cast to int64_t is defined and exact.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "jsonnum.h"

int tg__int_of_double(double d, int64_t min, int64_t max, int64_t *out) {
  if (!isfinite(d) || floor(d) != d) return -1;
  if (d < (double)min || d > (double)max) return -1;
  *out = (int64_t)d;
  return 0;
}

/* The shortest text that reads back as d ("1e+20", "1.5", "-3"). */
static void number_text(double d, char *buf, size_t n) {
  if (!isfinite(d)) {
    snprintf(buf, n, "%s", isnan(d) ? "NaN" : d > 0 ? "infinity" : "-infinity");
    return;
  }
  snprintf(buf, n, "%.15g", d);
  if (strtod(buf, NULL) != d) snprintf(buf, n, "%.17g", d);
}

/* What v is, for "got ...": the number itself, or its kind. */
static void describe(const cJSON *v, char *buf, size_t n) {
  if (cJSON_IsNumber(v)) number_text(v->valuedouble, buf, n);
  else if (cJSON_IsString(v)) snprintf(buf, n, "a string");
  else if (cJSON_IsBool(v)) snprintf(buf, n, "%s", cJSON_IsTrue(v) ? "true" : "false");
  else if (cJSON_IsNull(v)) snprintf(buf, n, "null");
  else if (cJSON_IsArray(v)) snprintf(buf, n, "an array");
  else if (cJSON_IsObject(v)) snprintf(buf, n, "an object");
  else snprintf(buf, n, "nothing");
}

int tg__json_int(const cJSON *v, const char *what, int64_t min, int64_t max,
                 int64_t *out, char *err, size_t errlen) {
  if (cJSON_IsNumber(v) && tg__int_of_double(v->valuedouble, min, max, out) == 0)
    return 0;
  char got[40];
  describe(v, got, sizeof got);
  snprintf(err, errlen, "%s must be an integer from %" PRId64 " to %" PRId64
           ", got %s", what, min, max, got);
  return -1;
}

int tg__json_int_arg(const cJSON *args, const char *tool, const char *key,
                     int64_t min, int64_t max, int64_t dflt, int64_t *out,
                     char *err, size_t errlen) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(args, key);
  if (!v || cJSON_IsNull(v)) {
    *out = dflt;
    return 0;
  }
  char what[96];
  snprintf(what, sizeof what, "%s: %s", tool, key);
  return tg__json_int(v, what, min, max, out, err, errlen);
}
