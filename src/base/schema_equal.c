/*
 * schema_equal.c — JSON values as JSON Schema compares them: deep
 * equality (const, enum, uniqueItems) where 1 and 1.0 are the same number
 * and members are unordered; duplicates found by hashing, so a long array
 * from an agent costs n log n, not n²; and multipleOf on the decimals the
 * numbers are written as, so 0.0075 is a multiple of 0.0001 even though
 * neither is exact in binary.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "schema_int.h"

int tg__sc_is_integer(double d) {
  if (d != d || d - d != 0) return 0; /* NaN, infinity */
  double a = d < 0 ? -d : d;
  /* every double of magnitude 2^53 or more is integral; below, the cast
   * is exact */
  return a >= 9007199254740992.0 || (double)(long long)d == d;
}

static size_t members(const cJSON *v) {
  size_t n = 0;
  for (const cJSON *e = v->child; e; e = e->next) n++;
  return n;
}

int tg__sc_equal(const cJSON *a, const cJSON *b) {
  int t = a->type & 0xFF;
  if (t != (b->type & 0xFF)) return 0;
  switch (t) {
    case cJSON_Number: return a->valuedouble == b->valuedouble;
    case cJSON_String:
      return a->valuestring && b->valuestring &&
             !strcmp(a->valuestring, b->valuestring);
    case cJSON_Array:
      for (a = a->child, b = b->child; a && b; a = a->next, b = b->next)
        if (!tg__sc_equal(a, b)) return 0;
      return !a && !b;
    case cJSON_Object:
      if (members(a) != members(b)) return 0;
      for (const cJSON *m = a->child; m; m = m->next) {
        const cJSON *o = m->string
                             ? cJSON_GetObjectItemCaseSensitive(b, m->string)
                             : NULL;
        if (!o || !tg__sc_equal(m, o)) return 0;
      }
      return 1;
    default: return 1; /* null, true, false */
  }
}

/* ---- duplicates ---------------------------------------------------------- */

static uint64_t mix(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return h;
}

static uint64_t hash_str(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; s && *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

/* Equal values hash alike: -0 as 0, members in any order. */
static uint64_t hash(const cJSON *v) {
  int t = v->type & 0xFF;
  uint64_t h = (uint64_t)t * 0x9E3779B97F4A7C15ull;
  if (t == cJSON_Number) {
    double d = v->valuedouble == 0 ? 0 : v->valuedouble;
    uint64_t bits;
    memcpy(&bits, &d, sizeof bits);
    return mix(h ^ bits);
  }
  if (t == cJSON_String) return mix(h ^ hash_str(v->valuestring));
  for (const cJSON *e = v->child; e; e = e->next)
    h = t == cJSON_Array ? mix(h * 31 + hash(e))
                         : h + mix(hash_str(e->string) ^ hash(e));
  return mix(h);
}

typedef struct {
  uint64_t h;
  size_t i;
  const cJSON *v;
} hashed;

static int by_hash(const void *x, const void *y) {
  const hashed *a = x, *b = y;
  if (a->h != b->h) return a->h < b->h ? -1 : 1;
  return a->i < b->i ? -1 : a->i > b->i;
}

/* The pair (i < j) with the smallest j among the items that share a hash. */
static int scan(const hashed *e, size_t n, size_t *pi, size_t *pj) {
  int found = 0;
  for (size_t a = 0; a < n; a++)
    for (size_t b = a + 1; b < n && e[b].h == e[a].h; b++)
      if ((!found || e[b].i < *pj) && tg__sc_equal(e[a].v, e[b].v)) {
        *pi = e[a].i;
        *pj = e[b].i;
        found = 1;
      }
  return found;
}

int tg__sc_duplicate(const cJSON *arr, size_t *pi, size_t *pj) {
  size_t n = members(arr), i = 0;
  if (n < 2) return 0;
  hashed *e = malloc(n * sizeof *e);
  if (!e) return -1;
  for (const cJSON *v = arr->child; v; v = v->next, i++)
    e[i] = (hashed){hash(v), i, v};
  qsort(e, n, sizeof *e, by_hash);
  int found = scan(e, n, pi, pj);
  free(e);
  return found;
}

/* ---- multipleOf ---------------------------------------------------------- */

/* |d| as digits * 10^exp, from the shortest text that reads back as d:
 * at most 17 significant digits, so digits < 10^17 < 2^57. */
static void decimal(double d, uint64_t *digits, int *exp) {
  char b[TG_JSON_NUMBER_MAX];
  const char *p = tg_json_number_text(d < 0 ? -d : d, b);
  uint64_t m = 0;
  int e = 0, frac = 0;
  for (; *p && *p != 'e' && *p != 'E'; p++) {
    if (*p == '.') {
      frac = 1;
      continue;
    }
    m = m * 10 + (uint64_t)(*p - '0');
    e -= frac;
  }
  if (*p) e += atoi(p + 1);
  while (m && m % 10 == 0) {
    m /= 10;
    e++;
  }
  *digits = m;
  *exp = e;
}

int tg__sc_multiple_of(double v, double m) {
  if (v - v != 0 || !(m > 0) || m - m != 0) return 0;
  uint64_t a, b;
  int ea, eb;
  decimal(v, &a, &ea);
  decimal(m, &b, &eb);
  if (a == 0) return 1;
  /* a has no factor 10 left: it cannot be a multiple of b * 10^k, k > 0 */
  if (ea < eb) return 0;
  uint64_t r = a % b;
  for (int k = ea - eb; k > 0 && r; k--) r = r * 10 % b;
  return r == 0;
}
